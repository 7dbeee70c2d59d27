// The series of datacenter GPUs: profiling activity (GPM), NVLink, the
// NVSwitch fabric and MIG. The DCGM_FI_* families carry dcgm-exporter's
// names, types, help and labels (etc/dcp-metrics-included.csv and
// default-counters.csv); the profiling ones are ratios 0..1 as DCGM reports
// them. On a MIG-enabled GPU the profiling series are per GPU instance
// (GPU_I_PROFILE, GPU_I_ID), as dcgm-exporter reports GPU instances.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "exporter/exporter.h"
#include "exporter/family_writer.h"
#include "exporter/gpu_rows.h"
#include "exporter/prom_text.h"

namespace gd {
namespace {

using prom::FamilyWriter;
using prom::Labels;

struct ProfFamily {
  const char* dcgm_name;
  const char* help;
  const char* engine;  // the native series' engine label
  opt<double> GpmActivity::*field;
};

// dcgm-exporter's order and help texts (dcp-metrics-included.csv).
constexpr ProfFamily kProf[] = {
    {"DCGM_FI_PROF_GR_ENGINE_ACTIVE",
     "Ratio of time the graphics engine is active.", "graphics",
     &GpmActivity::gr_engine_active_pct},
    {"DCGM_FI_PROF_SM_ACTIVE",
     "The ratio of cycles an SM has at least 1 warp assigned.", "sm_active",
     &GpmActivity::sm_active_pct},
    {"DCGM_FI_PROF_SM_OCCUPANCY",
     "The ratio of number of warps resident on an SM.", "sm_occupancy",
     &GpmActivity::sm_occupancy_pct},
    {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
     "Ratio of cycles the tensor (HMMA) pipe is active.", "tensor",
     &GpmActivity::tensor_active_pct},
    {"DCGM_FI_PROF_DRAM_ACTIVE",
     "Ratio of cycles the device memory interface is active sending or "
     "receiving data.",
     "dram", &GpmActivity::dram_active_pct},
    {"DCGM_FI_PROF_PIPE_FP64_ACTIVE",
     "Ratio of cycles the fp64 pipes are active.", "fp64",
     &GpmActivity::fp64_active_pct},
    {"DCGM_FI_PROF_PIPE_FP32_ACTIVE",
     "Ratio of cycles the fp32 pipes are active.", "fp32",
     &GpmActivity::fp32_active_pct},
    {"DCGM_FI_PROF_PIPE_FP16_ACTIVE",
     "Ratio of cycles the fp16 pipes are active.", "fp16",
     &GpmActivity::fp16_active_pct},
};

// The GPU's MIG instances that carry activity of their own; empty when the
// GPU is not split or its instances have none (the GPU's own then counts).
std::vector<const MigInstance*> active_instances(const GpuSample& s) {
  std::vector<const MigInstance*> out;
  if (s.mig_instances)
    for (const MigInstance& m : *s.mig_instances)
      if (m.gpm.any()) out.push_back(&m);
  return out;
}

double ratio(double pct) { return std::clamp(pct, 0.0, 100.0) / 100.0; }

std::string instance_labels(const std::string& gpu_labels,
                            const MigInstance& m) {
  return Labels()
      .add_raw(gpu_labels)
      .add("gpu_instance", int64_t{m.gi_id})
      .add("compute_instance", int64_t{m.ci_id})
      .add_untrusted("profile", m.profile)
      .add_untrusted("mig_uuid", m.uuid)
      .body();
}

}  // namespace

void render_dcgm_datacenter_families(const std::vector<GpuRow>& rows,
                                     const std::vector<std::string>& labels,
                                     const MetricsInput& in, std::string& out) {
  for (const ProfFamily& fam : kProf) {
    FamilyWriter f(out, fam.dcgm_name, "gauge", fam.help);
    for (size_t i = 0; i < rows.size(); ++i) {
      const GpuSample& s = *rows[i].sample;
      const auto instances = active_instances(s);
      if (!instances.empty()) {
        for (const MigInstance* m : instances)
          if (const auto& v = m->gpm.*fam.field)
            f.add(dcgm_labels(rows[i], in, m), ratio(*v));
        continue;
      }
      if (const auto& v = s.gpm.*fam.field) f.add(labels[i], ratio(*v));
    }
  }
  {
    // What DCGM calls the "bandwidth counter" is a rate: MB/s of both
    // directions of all links (dcgm-exporter types it counter all the same).
    FamilyWriter f(out, "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "counter",
                   "Total number of NVLink bandwidth counters for all lanes.");
    for (size_t i = 0; i < rows.size(); ++i) {
      const GpuSample& s = *rows[i].sample;
      if (s.nvlink_tx_bytes_per_s && s.nvlink_rx_bytes_per_s)
        f.add(labels[i],
              std::floor(static_cast<double>(*s.nvlink_tx_bytes_per_s +
                                             *s.nvlink_rx_bytes_per_s) /
                         1e6));
    }
  }
  struct Total {
    const char* name;
    const char* help;
    opt<uint64_t> NvLink::*field;
  };
  static constexpr Total kTotals[] = {
      {"DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL",
       "Total number of NVLink flow-control CRC errors.",
       &NvLink::crc_errors_total},
      {"DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL",
       "Total number of NVLink retries.", &NvLink::replay_total},
      {"DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL",
       "Total number of NVLink recovery errors.", &NvLink::recovery_total},
  };
  for (const Total& t : kTotals) {
    FamilyWriter f(out, t.name, "counter", t.help);
    for (size_t i = 0; i < rows.size(); ++i) {
      const auto& links = rows[i].sample->nvlinks;
      if (!links || links->empty()) continue;
      uint64_t sum = 0;
      bool known = true;
      for (const NvLink& l : *links) {
        known &= (l.*t.field).has_value();
        sum += (l.*t.field).value_or(0);
      }
      if (known) f.add(labels[i], sum);
    }
  }
  {
    FamilyWriter tx(out, "DCGM_FI_PROF_NVLINK_TX_BYTES", "gauge",
                    "The rate of data transmitted over NVLink, not including "
                    "protocol headers (in B/s).");
    for (size_t i = 0; i < rows.size(); ++i)
      tx.add_opt(labels[i], rows[i].sample->nvlink_tx_bytes_per_s);
  }
  {
    FamilyWriter rx(out, "DCGM_FI_PROF_NVLINK_RX_BYTES", "gauge",
                    "The rate of data received over NVLink, not including "
                    "protocol headers (in B/s).");
    for (size_t i = 0; i < rows.size(); ++i)
      rx.add_opt(labels[i], rows[i].sample->nvlink_rx_bytes_per_s);
  }
}

void render_native_datacenter_families(const std::vector<GpuRow>& rows,
                                       const std::vector<std::string>& labels,
                                       std::string& out) {
  {
    FamilyWriter f(out, "gpudoctor_gpu_activity_percent", "gauge",
                   "What the GPU's engines really did over the interval "
                   "(GPM, Hopper and newer): engine sm_active, sm_occupancy, "
                   "tensor, dram, fp64, fp32, fp16, graphics.");
    for (size_t i = 0; i < rows.size(); ++i)
      for (const ProfFamily& fam : kProf)
        if (const auto& v = rows[i].sample->gpm.*fam.field)
          f.add(Labels().add_raw(labels[i]).add("engine", fam.engine).body(),
                *v);
  }
  {
    FamilyWriter f(out, "gpudoctor_nvlink_up", "gauge",
                   "1 if the NVLink is active, 0 if it is down.");
    for (size_t i = 0; i < rows.size(); ++i) {
      const auto& links = rows[i].sample->nvlinks;
      if (!links) continue;
      for (const NvLink& l : *links)
        if (l.active)
          f.add(Labels().add_raw(labels[i]).add("link", int64_t{l.link}).body(),
                *l.active ? 1.0 : 0.0);
    }
  }
  {
    FamilyWriter f(out, "gpudoctor_nvlink_errors_total", "counter",
                   "NVLink errors since the driver loaded, by link and type "
                   "(crc: flow-control CRC errors, replay, recovery).");
    for (size_t i = 0; i < rows.size(); ++i) {
      const auto& links = rows[i].sample->nvlinks;
      if (!links) continue;
      for (const NvLink& l : *links) {
        const std::string base =
            Labels().add_raw(labels[i]).add("link", int64_t{l.link}).body();
        f.add_opt(Labels().add_raw(base).add("type", "crc").body(),
                  l.crc_errors_total);
        f.add_opt(Labels().add_raw(base).add("type", "replay").body(),
                  l.replay_total);
        f.add_opt(Labels().add_raw(base).add("type", "recovery").body(),
                  l.recovery_total);
      }
    }
  }
  {
    FamilyWriter f(out, "gpudoctor_nvlink_bytes_per_second", "gauge",
                   "NVLink data throughput of all links of the GPU.");
    for (size_t i = 0; i < rows.size(); ++i) {
      const GpuSample& s = *rows[i].sample;
      f.add_opt(Labels().add_raw(labels[i]).add("direction", "tx").body(),
                s.nvlink_tx_bytes_per_s);
      f.add_opt(Labels().add_raw(labels[i]).add("direction", "rx").body(),
                s.nvlink_rx_bytes_per_s);
    }
  }
  {
    FamilyWriter f(out, "gpudoctor_gpu_fabric_state", "gauge",
                   "1 for the GPU's NVSwitch fabric state as NVML reports it "
                   "(not_supported, not_started, in_progress, completed, "
                   "failed), 0 for the others.");
    static constexpr const char* kStates[] = {
        kFabricNotSupported, kFabricNotStarted, kFabricInProgress,
        kFabricCompleted, kFabricFailed};
    for (size_t i = 0; i < rows.size(); ++i) {
      const std::string& state = rows[i].sample->fabric_state;
      if (state.empty()) continue;
      for (const char* st : kStates)
        f.add(Labels().add_raw(labels[i]).add("state", st).body(),
              state == st ? 1.0 : 0.0);
    }
  }
  {
    FamilyWriter f(out, "gpudoctor_gpu_mig_mode", "gauge",
                   "MIG mode: 1 if enabled; state current, or pending (what "
                   "the next GPU reset turns it into).");
    for (size_t i = 0; i < rows.size(); ++i) {
      if (!rows[i].info) continue;
      const GpuInfo& g = *rows[i].info;
      if (g.mig_enabled)
        f.add(Labels().add_raw(labels[i]).add("state", "current").body(),
              *g.mig_enabled ? 1.0 : 0.0);
      if (g.mig_enabled_pending)
        f.add(Labels().add_raw(labels[i]).add("state", "pending").body(),
              *g.mig_enabled_pending ? 1.0 : 0.0);
    }
  }
  // Per MIG instance: memory and activity.
  {
    FamilyWriter used(out, "gpudoctor_mig_memory_used_bytes", "gauge",
                      "Memory in use on a MIG instance.");
    for (size_t i = 0; i < rows.size(); ++i)
      if (const auto& mig = rows[i].sample->mig_instances)
        for (const MigInstance& m : *mig)
          used.add_opt(instance_labels(labels[i], m), m.mem_used_bytes);
  }
  {
    FamilyWriter total(out, "gpudoctor_mig_memory_total_bytes", "gauge",
                       "Memory of a MIG instance.");
    for (size_t i = 0; i < rows.size(); ++i)
      if (const auto& mig = rows[i].sample->mig_instances)
        for (const MigInstance& m : *mig)
          total.add_opt(instance_labels(labels[i], m), m.mem_total_bytes);
  }
  {
    FamilyWriter f(out, "gpudoctor_mig_activity_percent", "gauge",
                   "What a MIG instance's engines really did (GPM), by "
                   "engine as in gpudoctor_gpu_activity_percent.");
    for (size_t i = 0; i < rows.size(); ++i)
      if (const auto& mig = rows[i].sample->mig_instances)
        for (const MigInstance& m : *mig)
          for (const ProfFamily& fam : kProf)
            if (const auto& v = m.gpm.*fam.field)
              f.add(Labels()
                        .add_raw(instance_labels(labels[i], m))
                        .add("engine", fam.engine)
                        .body(),
                    *v);
  }
}

}  // namespace gd
