// dcgm-exporter compatible families: names, types, units and help as in
// dcgm-exporter's etc/default-counters.csv, labels as dcgm-exporter sets
// them. Units differ from the model on purpose where DCGM's do (framebuffer
// in MiB).
#include <cmath>
#include <optional>

#include "exporter/exporter.h"
#include "exporter/gpu_rows.h"
#include "exporter/prom_text.h"

namespace gd {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

using Value = std::optional<double>;

template <typename T>
Value opt_num(const std::optional<T>& v) {
  if (!v) return std::nullopt;
  return static_cast<double>(*v);
}

struct Family {
  const char* name;
  const char* type;
  const char* help;
  Value (*value)(const GpuRow&, const MetricsInput&);
  // For a MIG-enabled GPU, the value of each instance instead of the GPU's
  // (labelled GPU_I_PROFILE/GPU_I_ID, as dcgm-exporter does for GPU
  // instances); nullptr: the GPU's value.
  Value (*instance_value)(const MigInstance&) = nullptr;
};

Value instance_fb_used(const MigInstance& m) {
  if (!m.mem_used_bytes) return std::nullopt;
  return std::floor(static_cast<double>(*m.mem_used_bytes) / kMiB);
}

Value instance_fb_free(const MigInstance& m) {
  if (!m.mem_used_bytes || !m.mem_total_bytes) return std::nullopt;
  uint64_t used = std::min(*m.mem_used_bytes, *m.mem_total_bytes);
  return std::floor(static_cast<double>(*m.mem_total_bytes - used) / kMiB);
}

Value instance_fb_total(const MigInstance& m) {
  if (!m.mem_total_bytes) return std::nullopt;
  return std::floor(static_cast<double>(*m.mem_total_bytes) / kMiB);
}

// Order as in default-counters.csv, extra fields after. The aggregate ECC,
// remapped-row and reserved-FB families are those of dcgm-exporter's
// etc/dcp-metrics-included.csv (names, types and help as there). DCGM's
// BAR1 fields are in no dcgm-exporter counter file: native series only.
const Family kFamilies[] = {
    {"DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).",
     [](const GpuRow& r, const MetricsInput&) {
       return opt_num(r.sample->sm_clock_mhz);
     }},
    {"DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz).",
     [](const GpuRow& r, const MetricsInput&) {
       return opt_num(r.sample->mem_clock_mhz);
     }},
    {"DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C).",
     [](const GpuRow& r, const MetricsInput&) {
       return opt_num(r.sample->mem_temp_c);
     }},
    {"DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C).",
     [](const GpuRow& r, const MetricsInput&) {
       return opt_num(r.sample->temp_c);
     }},
    {"DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).",
     [](const GpuRow& r, const MetricsInput&) {
       return opt_num(r.sample->power_w);
     }},
    {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter",
     "Total energy consumption since boot (in mJ).",
     [](const GpuRow& r, const MetricsInput&) {
       return opt_num(r.sample->energy_mj_total);
     }},
    {"DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter",
     "Total number of PCIe retries.",
     [](const GpuRow& r, const MetricsInput&) {
       return opt_num(r.sample->pcie_replay_total);
     }},
    {"DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).",
     [](const GpuRow& r, const MetricsInput&) {
       return opt_num(r.sample->util_pct);
     }},
    {"DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %).",
     [](const GpuRow& r, const MetricsInput&) {
       return opt_num(r.sample->mem_util_pct);
     }},
    {"DCGM_FI_DEV_ENC_UTIL", "gauge", "Encoder utilization (in %).",
     [](const GpuRow& r, const MetricsInput&) {
       return opt_num(r.sample->enc_util_pct);
     }},
    {"DCGM_FI_DEV_DEC_UTIL", "gauge", "Decoder utilization (in %).",
     [](const GpuRow& r, const MetricsInput&) {
       return opt_num(r.sample->dec_util_pct);
     }},
    {"DCGM_FI_DEV_XID_ERRORS", "gauge",
     "Value of the last XID error encountered.",
     [](const GpuRow& r, const MetricsInput& in) -> Value {
       auto it = in.last_xid.find(r.sample->index);
       return it == in.last_xid.end() ? 0.0 : it->second;
     }},
    {"DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB).",
     [](const GpuRow& r, const MetricsInput&) -> Value {
       if (!r.info || !r.info->memory_total_bytes || !r.sample->mem_used_bytes)
         return std::nullopt;
       uint64_t total = *r.info->memory_total_bytes;
       uint64_t used = std::min(*r.sample->mem_used_bytes, total);
       return std::floor(static_cast<double>(total - used) / kMiB);
     },
     instance_fb_free},
    {"DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).",
     [](const GpuRow& r, const MetricsInput&) -> Value {
       if (!r.sample->mem_used_bytes) return std::nullopt;
       return std::floor(static_cast<double>(*r.sample->mem_used_bytes) / kMiB);
     },
     instance_fb_used},
    {"DCGM_FI_DEV_FB_TOTAL", "gauge", "Framebuffer memory total (in MiB).",
     [](const GpuRow& r, const MetricsInput&) -> Value {
       if (!r.info || !r.info->memory_total_bytes) return std::nullopt;
       return std::floor(static_cast<double>(*r.info->memory_total_bytes) /
                         kMiB);
     },
     instance_fb_total},
    {"DCGM_FI_DEV_FB_RESERVED", "gauge",
     "Framebuffer memory reserved (in MiB).",
     [](const GpuRow& r, const MetricsInput&) -> Value {
       if (!r.sample->mem_reserved_bytes) return std::nullopt;
       return std::floor(static_cast<double>(*r.sample->mem_reserved_bytes) /
                         kMiB);
     }},
    {"DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "counter",
     "Total number of single-bit volatile ECC errors.",
     [](const GpuRow& r, const MetricsInput&) {
       return opt_num(r.sample->ecc_sbe_volatile_total);
     }},
    {"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter",
     "Total number of double-bit volatile ECC errors.",
     [](const GpuRow& r, const MetricsInput&) {
       return opt_num(r.sample->ecc_dbe_volatile_total);
     }},
    {"DCGM_FI_DEV_ECC_SBE_AGG_TOTAL", "counter",
     "Total number of single-bit persistent ECC errors.",
     [](const GpuRow& r, const MetricsInput&) {
       return opt_num(r.sample->ecc_sbe_aggregate_total);
     }},
    {"DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", "counter",
     "Total number of double-bit persistent ECC errors.",
     [](const GpuRow& r, const MetricsInput&) {
       return opt_num(r.sample->ecc_dbe_aggregate_total);
     }},
    {"DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "counter",
     "Number of remapped rows for uncorrectable errors",
     [](const GpuRow& r, const MetricsInput&) {
       return opt_num(r.sample->remapped_rows_uncorrectable_total);
     }},
    {"DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "counter",
     "Number of remapped rows for correctable errors",
     [](const GpuRow& r, const MetricsInput&) {
       return opt_num(r.sample->remapped_rows_correctable_total);
     }},
    {"DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge",
     "Whether remapping of rows has failed",
     [](const GpuRow& r, const MetricsInput&) -> Value {
       if (!r.sample->remapped_rows_failure) return std::nullopt;
       return *r.sample->remapped_rows_failure ? 1.0 : 0.0;
     }},
    {"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "gauge",
     "Current clock throttle reasons (bitmask of "
     "DCGM_CLOCKS_THROTTLE_REASON_*)",
     [](const GpuRow& r, const MetricsInput&) -> Value {
       if (!r.sample->clock_event_reasons) return std::nullopt;
       return static_cast<double>(
           clock_event_reason_mask(*r.sample->clock_event_reasons));
     }},
    {"DCGM_FI_DEV_FAN_SPEED", "gauge", "Fan speed (in 0-100%).",
     [](const GpuRow& r, const MetricsInput&) {
       return opt_num(r.sample->fan_pct);
     }},
    {"DCGM_FI_DEV_PSTATE", "gauge", "Performance state (P-State) 0-15.",
     [](const GpuRow& r, const MetricsInput&) {
       return opt_num(r.sample->pstate);
     }},
    {"DCGM_FI_DEV_POWER_MGMT_LIMIT", "gauge", "Power management limit (in W).",
     [](const GpuRow& r, const MetricsInput&) -> Value {
       return r.info ? opt_num(r.info->power_limit_w) : std::nullopt;
     }},
};

// The one pod container the kubelet gave this GPU (or, for an instance's
// series, this MIG device), as dcgm-exporter labels a GPU in Kubernetes;
// nullptr when no pod or several containers share it (time-slicing): then
// each pod's share is on the per-process series, not copied onto the GPU's.
const PodAllocation* sole_pod(const GpuRow& row, const MetricsInput& in,
                              const MigInstance* instance) {
  if (!in.sample->pod_allocations) return nullptr;
  const PodAllocation* found = nullptr;
  for (const PodAllocation& a : *in.sample->pod_allocations) {
    const bool ours =
        instance ? a.uuid == instance->uuid : a.gpu == row.sample->index;
    if (!ours) continue;
    if (found && (found->namespace_ != a.namespace_ || found->name != a.name ||
                  found->container != a.container))
      return nullptr;
    found = &a;
  }
  return found;
}

}  // namespace

std::string dcgm_labels(const GpuRow& row, const MetricsInput& in,
                        const MigInstance* instance) {
  prom::Labels l;
  const int index = row.sample->index;
  l.add("gpu", int64_t{index});
  l.add("UUID", row.info ? row.info->uuid : "");
  l.add("pci_bus_id", row.info ? row.info->pci_bus_id : "");
  l.add("device", "nvidia" + std::to_string(index));
  l.add("modelName", row.info ? row.info->name : "");
  if (instance) {
    l.add_untrusted("GPU_I_PROFILE", instance->profile);
    l.add("GPU_I_ID", int64_t{instance->gi_id});
  }
  l.add("Hostname", in.header->host.hostname);
  l.add("DCGM_FI_DRIVER_VERSION",
        in.header->driver ? in.header->driver->driver_version : "");
  if (const PodAllocation* pod = sole_pod(row, in, instance)) {
    l.add_untrusted("container", pod->container);
    l.add_untrusted("namespace", pod->namespace_);
    l.add_untrusted("pod", pod->name);
  }
  return l.body();
}

uint64_t clock_event_reason_mask(const std::vector<std::string>& reasons) {
  // NVML's nvmlClocksThrottleReason* bits for trace-format.md's names.
  static const std::pair<const char*, uint64_t> kBits[] = {
      {"gpu_idle", 0x1},
      {"applications_clocks_setting", 0x2},
      {"sw_power_cap", 0x4},
      {"hw_slowdown", 0x8},
      {"sync_boost", 0x10},
      {"sw_thermal_slowdown", 0x20},
      {"hw_thermal_slowdown", 0x40},
      {"hw_power_brake_slowdown", 0x80},
      {"display_clock_setting", 0x100},
  };
  uint64_t mask = 0;
  for (const auto& r : reasons)
    for (const auto& [name, bit] : kBits)
      if (r == name) mask |= bit;
  return mask;
}

void render_dcgm_families(const MetricsInput& in, std::string& out) {
  const auto rows = answered_gpus(in);
  if (rows.empty()) return;
  std::vector<std::string> labels;
  labels.reserve(rows.size());
  for (const auto& row : rows) labels.push_back(dcgm_labels(row, in));

  for (const auto& fam : kFamilies) {
    bool header_written = false;
    auto emit = [&](std::string_view label_body, double v) {
      if (!header_written) {
        prom::append_family_header(out, fam.name, fam.type, fam.help);
        header_written = true;
      }
      prom::append_sample(out, fam.name, label_body, v);
    };
    for (size_t i = 0; i < rows.size(); ++i) {
      const auto& mig = rows[i].sample->mig_instances;
      if (fam.instance_value && mig && !mig->empty()) {
        for (const MigInstance& m : *mig)
          if (Value v = fam.instance_value(m))
            emit(dcgm_labels(rows[i], in, &m), *v);
        continue;
      }
      if (Value v = fam.value(rows[i], in)) emit(labels[i], *v);
    }
  }
  render_dcgm_datacenter_families(rows, labels, in, out);
}

}  // namespace gd
