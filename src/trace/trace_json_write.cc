// Model -> JSON text (one trace line). Field names and order follow
// trace-format.md; the reader relies on neither, but writing in a fixed order
// lets it find keys on the first compare.
#include <cmath>

#include "trace/faults_json.h"
#include "trace/json_out.h"
#include "trace/rdma_json.h"
#include "trace/trace_io.h"

namespace gd {
namespace {

using namespace json_out;

// Additions to version 1 are written only when known: absent and null mean
// the same, and a day-long trace of a GPU without them stays as small as
// before. `key` is the literal ",\"name\":".
template <size_t N, typename T>
void if_known(std::string& out, const char (&key)[N],
              const std::optional<T>& v) {
  if (!v) return;
  lit(out, key);
  value(out, v);
}

template <size_t N>
void if_known(std::string& out, const char (&key)[N], const std::string& v) {
  if (v.empty()) return;
  lit(out, key);
  string(out, v);
}

void append_host_info(std::string& out, const HostInfo& h) {
  lit(out, "{\"hostname\":");
  string_or_null(out, h.hostname);
  lit(out, ",\"kernel\":");
  string_or_null(out, h.kernel);
  lit(out, ",\"cpu_model\":");
  string_or_null(out, h.cpu_model);
  lit(out, ",\"cpu_count\":");
  value(out, h.cpu_count);
  lit(out, ",\"mem_total_bytes\":");
  value(out, h.mem_total_bytes);
  lit(out, ",\"swap_total_bytes\":");
  value(out, h.swap_total_bytes);
  lit(out, ",\"pid_namespace\":");
  string_or_null(out, h.pid_namespace);
  if (h.rdma_devices) {
    lit(out, ",\"rdma_devices\":");
    append_rdma_devices(out, *h.rdma_devices);
  }
  out.push_back('}');
}

void append_driver_info(std::string& out, const std::optional<DriverInfo>& d) {
  if (!d) {
    null(out);
    return;
  }
  lit(out, "{\"driver_version\":");
  string_or_null(out, d->driver_version);
  lit(out, ",\"cuda_driver_version\":");
  string_or_null(out, d->cuda_driver_version);
  lit(out, ",\"nvml_version\":");
  string_or_null(out, d->nvml_version);
  if_known(out, ",\"kernel_module_version\":", d->kernel_module_version);
  if_known(out, ",\"library_version\":", d->library_version);
  out.push_back('}');
}

// The GPM fields, flat in the object they belong to (trace-format.md).
void append_gpm(std::string& out, const GpmActivity& a) {
  if_known(out, ",\"sm_active_pct\":", a.sm_active_pct);
  if_known(out, ",\"sm_occupancy_pct\":", a.sm_occupancy_pct);
  if_known(out, ",\"tensor_active_pct\":", a.tensor_active_pct);
  if_known(out, ",\"dram_active_pct\":", a.dram_active_pct);
  if_known(out, ",\"fp64_active_pct\":", a.fp64_active_pct);
  if_known(out, ",\"fp32_active_pct\":", a.fp32_active_pct);
  if_known(out, ",\"fp16_active_pct\":", a.fp16_active_pct);
  if_known(out, ",\"gr_engine_active_pct\":", a.gr_engine_active_pct);
}

// Header mig_profiles and sample mig_instances: the same objects (the
// header's carry no used memory or activity).
void append_mig_instances(std::string& out, const std::vector<MigInstance>& v) {
  out.push_back('[');
  for (size_t i = 0; i < v.size(); ++i) {
    const MigInstance& m = v[i];
    if (i) out.push_back(',');
    lit(out, "{\"gi_id\":");
    unsigned_integer(out, m.gi_id);
    lit(out, ",\"ci_id\":");
    unsigned_integer(out, m.ci_id);
    lit(out, ",\"profile\":");
    string_or_null(out, m.profile);
    lit(out, ",\"uuid\":");
    string_or_null(out, m.uuid);
    if_known(out, ",\"mem_total_bytes\":", m.mem_total_bytes);
    if_known(out, ",\"mem_used_bytes\":", m.mem_used_bytes);
    append_gpm(out, m.gpm);
    out.push_back('}');
  }
  out.push_back(']');
}

void append_nvlinks(std::string& out, const std::vector<NvLink>& v) {
  out.push_back('[');
  for (size_t i = 0; i < v.size(); ++i) {
    const NvLink& l = v[i];
    if (i) out.push_back(',');
    lit(out, "{\"link\":");
    integer(out, l.link);
    lit(out, ",\"active\":");
    value(out, l.active);
    lit(out, ",\"version\":");
    value(out, l.version);
    lit(out, ",\"crc_errors_total\":");
    value(out, l.crc_errors_total);
    lit(out, ",\"replay_total\":");
    value(out, l.replay_total);
    lit(out, ",\"recovery_total\":");
    value(out, l.recovery_total);
    out.push_back('}');
  }
  out.push_back(']');
}

void append_gpu_info(std::string& out, const GpuInfo& g) {
  lit(out, "{\"index\":");
  integer(out, g.index);
  lit(out, ",\"uuid\":");
  string_or_null(out, g.uuid);
  lit(out, ",\"name\":");
  string_or_null(out, g.name);
  lit(out, ",\"pci_bus_id\":");
  string_or_null(out, g.pci_bus_id);
  lit(out, ",\"serial\":");
  string_or_null(out, g.serial);
  lit(out, ",\"memory_total_bytes\":");
  value(out, g.memory_total_bytes);
  lit(out, ",\"power_limit_w\":");
  value(out, g.power_limit_w);
  lit(out, ",\"power_default_limit_w\":");
  value(out, g.power_default_limit_w);
  lit(out, ",\"pcie_max_gen\":");
  value(out, g.pcie_max_gen);
  lit(out, ",\"pcie_max_width\":");
  value(out, g.pcie_max_width);
  lit(out, ",\"temp_slowdown_c\":");
  value(out, g.temp_slowdown_c);
  lit(out, ",\"temp_shutdown_c\":");
  value(out, g.temp_shutdown_c);
  lit(out, ",\"sm_clock_max_mhz\":");
  value(out, g.sm_clock_max_mhz);
  lit(out, ",\"mem_clock_max_mhz\":");
  value(out, g.mem_clock_max_mhz);
  lit(out, ",\"compute_capability\":");
  string_or_null(out, g.compute_capability);
  lit(out, ",\"architecture\":");
  string_or_null(out, g.architecture);
  lit(out, ",\"ecc_enabled\":");
  value(out, g.ecc_enabled);
  lit(out, ",\"mig_enabled\":");
  value(out, g.mig_enabled);
  lit(out, ",\"persistence_mode\":");
  value(out, g.persistence_mode);
  lit(out, ",\"compute_mode\":");
  string_or_null(out, g.compute_mode);
  lit(out, ",\"numa_node\":");
  value(out, g.numa_node);
  if_known(out, ",\"minor_number\":", g.minor_number);
  if_known(out, ",\"temp_max_operating_c\":", g.temp_max_operating_c);
  if_known(out, ",\"temp_mem_max_c\":", g.temp_mem_max_c);
  if_known(out, ",\"bar1_total_bytes\":", g.bar1_total_bytes);
  if_known(out, ",\"vbios_version\":", g.vbios_version);
  if_known(out, ",\"nvlink_count\":", g.nvlink_count);
  if (g.mig_profiles) {
    lit(out, ",\"mig_profiles\":");
    append_mig_instances(out, *g.mig_profiles);
  }
  if_known(out, ",\"mig_enabled_pending\":", g.mig_enabled_pending);
  out.push_back('}');
}

void append_string_list(std::string& out, const std::vector<std::string>& v) {
  out.push_back('[');
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out.push_back(',');
    string(out, v[i]);
  }
  out.push_back(']');
}

void append_pci_gpus(std::string& out, const std::vector<PciGpu>& gpus) {
  out.push_back('[');
  for (size_t i = 0; i < gpus.size(); ++i) {
    if (i) out.push_back(',');
    lit(out, "{\"address\":");
    string(out, gpus[i].address);
    lit(out, ",\"driver\":");
    value(out, gpus[i].driver);
    out.push_back('}');
  }
  out.push_back(']');
}

void append_remap_histogram(std::string& out, const RowRemapHistogram& h) {
  lit(out, "{\"max\":");
  unsigned_integer(out, h.max);
  lit(out, ",\"high\":");
  unsigned_integer(out, h.high);
  lit(out, ",\"partial\":");
  unsigned_integer(out, h.partial);
  lit(out, ",\"low\":");
  unsigned_integer(out, h.low);
  lit(out, ",\"none\":");
  unsigned_integer(out, h.none);
  out.push_back('}');
}

void append_gpu_processes(std::string& out,
                          const std::optional<std::vector<GpuProcess>>& ps) {
  if (!ps) {
    null(out);
    return;
  }
  out.push_back('[');
  for (size_t i = 0; i < ps->size(); ++i) {
    const GpuProcess& p = (*ps)[i];
    if (i) out.push_back(',');
    lit(out, "{\"pid\":");
    unsigned_integer(out, p.pid);
    lit(out, ",\"used_bytes\":");
    value(out, p.used_bytes);
    lit(out, ",\"type\":");
    string_or_null(out, p.type);
    if_known(out, ",\"sm_util_pct\":", p.sm_util_pct);
    if_known(out, ",\"mem_util_pct\":", p.mem_util_pct);
    if_known(out, ",\"gi_id\":", p.gi_id);
    if_known(out, ",\"ci_id\":", p.ci_id);
    out.push_back('}');
  }
  out.push_back(']');
}

void append_gpu_sample(std::string& out, const GpuSample& g) {
  lit(out, "{\"index\":");
  integer(out, g.index);
  // A lost or stale GPU has no readings: only the marker is written.
  if (g.lost) {
    lit(out, ",\"lost\":true}");
    return;
  }
  if (g.stale) {
    lit(out, ",\"stale\":true}");
    return;
  }
  lit(out, ",\"util_pct\":");
  value(out, g.util_pct);
  lit(out, ",\"mem_util_pct\":");
  value(out, g.mem_util_pct);
  lit(out, ",\"mem_used_bytes\":");
  value(out, g.mem_used_bytes);
  lit(out, ",\"temp_c\":");
  value(out, g.temp_c);
  lit(out, ",\"mem_temp_c\":");
  value(out, g.mem_temp_c);
  lit(out, ",\"power_w\":");
  value(out, g.power_w);
  lit(out, ",\"energy_mj_total\":");
  value(out, g.energy_mj_total);
  lit(out, ",\"fan_pct\":");
  value(out, g.fan_pct);
  lit(out, ",\"sm_clock_mhz\":");
  value(out, g.sm_clock_mhz);
  lit(out, ",\"mem_clock_mhz\":");
  value(out, g.mem_clock_mhz);
  lit(out, ",\"pstate\":");
  value(out, g.pstate);
  lit(out, ",\"clock_event_reasons\":");
  if (g.clock_event_reasons) {
    append_string_list(out, *g.clock_event_reasons);
  } else {
    null(out);
  }
  lit(out, ",\"pcie_gen\":");
  value(out, g.pcie_gen);
  lit(out, ",\"pcie_width\":");
  value(out, g.pcie_width);
  lit(out, ",\"pcie_tx_bytes_per_s\":");
  value(out, g.pcie_tx_bytes_per_s);
  lit(out, ",\"pcie_rx_bytes_per_s\":");
  value(out, g.pcie_rx_bytes_per_s);
  lit(out, ",\"pcie_replay_total\":");
  value(out, g.pcie_replay_total);
  lit(out, ",\"ecc_sbe_volatile_total\":");
  value(out, g.ecc_sbe_volatile_total);
  lit(out, ",\"ecc_dbe_volatile_total\":");
  value(out, g.ecc_dbe_volatile_total);
  lit(out, ",\"retired_pages_pending\":");
  value(out, g.retired_pages_pending);
  lit(out, ",\"remapped_rows_pending\":");
  value(out, g.remapped_rows_pending);
  lit(out, ",\"remapped_rows_failure\":");
  value(out, g.remapped_rows_failure);
  lit(out, ",\"processes\":");
  append_gpu_processes(out, g.processes);
  if_known(out, ",\"mem_reserved_bytes\":", g.mem_reserved_bytes);
  if_known(out, ",\"bar1_used_bytes\":", g.bar1_used_bytes);
  if_known(out, ",\"ecc_sbe_aggregate_total\":", g.ecc_sbe_aggregate_total);
  if_known(out, ",\"ecc_dbe_aggregate_total\":", g.ecc_dbe_aggregate_total);
  if_known(out, ",\"ecc_sram_correctable_aggregate_total\":",
           g.ecc_sram_correctable_aggregate_total);
  if_known(out, ",\"ecc_sram_uncorrectable_aggregate_total\":",
           g.ecc_sram_uncorrectable_aggregate_total);
  if_known(out, ",\"ecc_dram_correctable_aggregate_total\":",
           g.ecc_dram_correctable_aggregate_total);
  if_known(out, ",\"ecc_dram_uncorrectable_aggregate_total\":",
           g.ecc_dram_uncorrectable_aggregate_total);
  if_known(out, ",\"ecc_sram_correctable_volatile_total\":",
           g.ecc_sram_correctable_volatile_total);
  if_known(out, ",\"ecc_sram_uncorrectable_volatile_total\":",
           g.ecc_sram_uncorrectable_volatile_total);
  if_known(out, ",\"ecc_dram_correctable_volatile_total\":",
           g.ecc_dram_correctable_volatile_total);
  if_known(out, ",\"ecc_dram_uncorrectable_volatile_total\":",
           g.ecc_dram_uncorrectable_volatile_total);
  if_known(out,
           ",\"ecc_sram_threshold_exceeded\":", g.ecc_sram_threshold_exceeded);
  if_known(out, ",\"remapped_rows_correctable_total\":",
           g.remapped_rows_correctable_total);
  if_known(out, ",\"remapped_rows_uncorrectable_total\":",
           g.remapped_rows_uncorrectable_total);
  if (g.row_remap_histogram) {
    lit(out, ",\"row_remap_histogram\":");
    append_remap_histogram(out, *g.row_remap_histogram);
  }
  if_known(out, ",\"recovery_action\":", g.recovery_action);
  if_known(out, ",\"temp_limit_margin_c\":", g.temp_limit_margin_c);
  if (!g.read_errors.empty()) {
    lit(out, ",\"read_errors\":");
    append_string_list(out, g.read_errors);
  }
  append_gpm(out, g.gpm);
  if_known(out, ",\"nvlink_tx_bytes_per_s\":", g.nvlink_tx_bytes_per_s);
  if_known(out, ",\"nvlink_rx_bytes_per_s\":", g.nvlink_rx_bytes_per_s);
  if (g.nvlinks) {
    lit(out, ",\"nvlinks\":");
    append_nvlinks(out, *g.nvlinks);
  }
  if (g.mig_instances) {
    lit(out, ",\"mig_instances\":");
    append_mig_instances(out, *g.mig_instances);
  }
  if_known(out, ",\"enc_util_pct\":", g.enc_util_pct);
  if_known(out, ",\"dec_util_pct\":", g.dec_util_pct);
  if_known(out, ",\"fabric_state\":", g.fabric_state);
  out.push_back('}');
}

void append_host_sample(std::string& out, const HostSample& h) {
  lit(out, "{\"cpu_util_pct\":");
  value(out, h.cpu_util_pct);
  lit(out, ",\"cpu_iowait_pct\":");
  value(out, h.cpu_iowait_pct);
  lit(out, ",\"cpu_steal_pct\":");
  value(out, h.cpu_steal_pct);
  lit(out, ",\"load1\":");
  value(out, h.load1);
  lit(out, ",\"mem_available_bytes\":");
  value(out, h.mem_available_bytes);
  lit(out, ",\"swap_used_bytes\":");
  value(out, h.swap_used_bytes);
  lit(out, ",\"swap_in_pages_per_s\":");
  value(out, h.swap_in_pages_per_s);
  lit(out, ",\"swap_out_pages_per_s\":");
  value(out, h.swap_out_pages_per_s);
  lit(out, ",\"disk_read_bytes_per_s\":");
  value(out, h.disk_read_bytes_per_s);
  lit(out, ",\"disk_write_bytes_per_s\":");
  value(out, h.disk_write_bytes_per_s);
  lit(out, ",\"disk_busy_pct\":");
  value(out, h.disk_busy_pct);
  lit(out, ",\"psi_cpu_some_pct\":");
  value(out, h.psi_cpu_some_pct);
  lit(out, ",\"psi_mem_some_pct\":");
  value(out, h.psi_mem_some_pct);
  lit(out, ",\"psi_io_some_pct\":");
  value(out, h.psi_io_some_pct);
  if_known(out, ",\"kernel_lines_unclassified_total\":",
           h.kernel_lines_unclassified_total);
  if (h.other_cpu_top) {
    lit(out, ",\"other_cpu_top\":[");
    for (size_t i = 0; i < h.other_cpu_top->size(); ++i) {
      const OtherCpuProcess& p = (*h.other_cpu_top)[i];
      if (i) out.push_back(',');
      lit(out, "{\"pid\":");
      unsigned_integer(out, p.pid);
      lit(out, ",\"comm\":");
      string(out, p.comm);
      lit(out, ",\"user\":");
      string(out, p.user);
      lit(out, ",\"container\":");
      value(out, p.container);
      lit(out, ",\"cpu_pct\":");
      number(out, p.cpu_pct);
      out.push_back('}');
    }
    out.push_back(']');
  }
  if (h.rdma_ports) {
    lit(out, ",\"rdma_ports\":");
    append_rdma_ports(out, *h.rdma_ports);
  }
  out.push_back('}');
}

// `pod_allocations`: the kubelet's GPUs of pods ([] = none allocated).
void append_pod_allocations(std::string& out,
                            const std::vector<PodAllocation>& list) {
  lit(out, ",\"pod_allocations\":[");
  for (size_t i = 0; i < list.size(); ++i) {
    const PodAllocation& a = list[i];
    if (i) out.push_back(',');
    lit(out, "{\"gpu\":");
    integer(out, a.gpu);
    lit(out, ",\"uuid\":");
    string(out, a.uuid);
    if_known(out, ",\"replica\":", a.replica);
    lit(out, ",\"resource\":");
    string(out, a.resource);
    lit(out, ",\"namespace\":");
    string(out, a.namespace_);
    lit(out, ",\"name\":");
    string(out, a.name);
    lit(out, ",\"container\":");
    string(out, a.container);
    out.push_back('}');
  }
  out.push_back(']');
}

// `pod`: every name, null where unknown; `deleted` only once asked.
void append_pod(std::string& out, const ProcessPod& pod) {
  lit(out, ",\"pod\":{\"uid\":");
  value(out, pod.uid);
  lit(out, ",\"namespace\":");
  value(out, pod.namespace_);
  lit(out, ",\"name\":");
  value(out, pod.name);
  lit(out, ",\"container\":");
  value(out, pod.container);
  if_known(out, ",\"deleted\":", pod.deleted);
  out.push_back('}');
}

void append_process_sample(std::string& out, const ProcessSample& p) {
  // Process strings are written as they are, "" included: a kernel thread
  // really has an empty command line.
  lit(out, "{\"pid\":");
  unsigned_integer(out, p.pid);
  lit(out, ",\"ppid\":");
  value(out, p.ppid);
  lit(out, ",\"user\":");
  string(out, p.user);
  lit(out, ",\"name\":");
  string(out, p.name);
  lit(out, ",\"cmdline\":");
  string(out, p.cmdline);
  lit(out, ",\"state\":");
  string(out, p.state);
  lit(out, ",\"cpu_pct\":");
  value(out, p.cpu_pct);
  lit(out, ",\"threads\":");
  value(out, p.threads);
  lit(out, ",\"rss_bytes\":");
  value(out, p.rss_bytes);
  lit(out, ",\"cgroup\":");
  value(out, p.cgroup);
  lit(out, ",\"libs\":");
  append_string_list(out, p.libs);
  lit(out, ",\"start_time\":");
  value(out, p.start_time);
  if_known(out, ",\"dev_shm_bytes\":", p.dev_shm_bytes);
  if_known(out, ",\"ns_pid\":", p.ns_pid);
  if_known(out, ",\"slurm_job_id\":", p.slurm_job_id);
  if (p.pod) append_pod(out, *p.pod);
  out.push_back('}');
}

void append_event(std::string& out, const Event& e) {
  lit(out, "{\"kind\":");
  string(out, e.kind);
  lit(out, ",\"gpu\":");
  value(out, e.gpu);
  lit(out, ",\"code\":");
  value(out, e.code);
  lit(out, ",\"pid\":");
  value(out, e.pid);
  lit(out, ",\"text\":");
  string(out, e.text);
  if_known(out, ",\"severity\":", e.severity);
  if_known(out, ",\"pci_address\":", e.pci_address);
  if (e.logged_at) {
    lit(out, ",\"logged_at\":");
    value(out, e.logged_at);
  }
  out.push_back('}');
}

}  // namespace

void append_header_json(std::string& out, const TraceHeader& h) {
  // This writer produces version 1, whatever version the header was read as.
  lit(out, "{\"format\":\"gpudoctor-trace\",\"version\":1,\"host\":");
  append_host_info(out, h.host);
  lit(out, ",\"nvml_status\":");
  string_or_null(out, h.nvml_status);
  lit(out, ",\"nvml_error\":");
  string_or_null(out, h.nvml_error);
  lit(out, ",\"driver\":");
  append_driver_info(out, h.driver);
  lit(out, ",\"gpus\":[");
  for (size_t i = 0; i < h.gpus.size(); ++i) {
    if (i) out.push_back(',');
    append_gpu_info(out, h.gpus[i]);
  }
  out.push_back(']');
  if (h.pci_gpus) {
    lit(out, ",\"pci_gpus\":");
    append_pci_gpus(out, *h.pci_gpus);
  }
  if (!h.kernel_log_error.empty()) {
    lit(out, ",\"kernel_log_error\":");
    string_or_null(out, h.kernel_log_error);
  }
  if (!h.faults_json.empty()) {
    lit(out, ",\"faults\":");
    append_faults_json(out, h.faults_json);
  }
  out.push_back('}');
}

void append_sample_json(std::string& out, const Sample& s) {
  if (!std::isfinite(s.t)) {
    throw TraceError("cannot write a sample whose t is not a finite number");
  }
  lit(out, "{\"t\":");
  number(out, s.t);
  lit(out, ",\"gpus\":[");
  for (size_t i = 0; i < s.gpus.size(); ++i) {
    if (i) out.push_back(',');
    append_gpu_sample(out, s.gpus[i]);
  }
  lit(out, "],\"host\":");
  append_host_sample(out, s.host);
  lit(out, ",\"processes\":[");
  for (size_t i = 0; i < s.processes.size(); ++i) {
    if (i) out.push_back(',');
    append_process_sample(out, s.processes[i]);
  }
  out.push_back(']');
  if (s.processes_left_out > 0) {
    lit(out, ",\"processes_left_out\":");
    unsigned_integer(out, s.processes_left_out);
  }
  lit(out, ",\"events\":[");
  for (size_t i = 0; i < s.events.size(); ++i) {
    if (i) out.push_back(',');
    append_event(out, s.events[i]);
  }
  out.push_back(']');
  if (s.device_holders) {
    lit(out, ",\"device_holders\":[");
    for (size_t i = 0; i < s.device_holders->size(); ++i) {
      const DeviceHolder& d = (*s.device_holders)[i];
      if (i) out.push_back(',');
      lit(out, "{\"pid\":");
      unsigned_integer(out, d.pid);
      lit(out, ",\"devices\":");
      append_string_list(out, d.devices);
      out.push_back('}');
    }
    out.push_back(']');
  }
  if (!s.slurm_jobs.empty()) {
    lit(out, ",\"slurm_jobs\":[");
    for (size_t i = 0; i < s.slurm_jobs.size(); ++i) {
      const SlurmJob& j = s.slurm_jobs[i];
      if (i) out.push_back(',');
      lit(out, "{\"id\":");
      string(out, j.id);
      lit(out, ",\"name\":");
      string(out, j.name);
      lit(out, ",\"user\":");
      string(out, j.user);
      lit(out, ",\"partition\":");
      string(out, j.partition);
      out.push_back('}');
    }
    out.push_back(']');
  }
  if (s.pod_allocations) append_pod_allocations(out, *s.pod_allocations);
  out.push_back('}');
}

std::string header_to_json(const TraceHeader& h) {
  std::string out;
  append_header_json(out, h);
  return out;
}

std::string sample_to_json(const Sample& s) {
  std::string out;
  out.reserve(1024);
  append_sample_json(out, s);
  return out;
}

}  // namespace gd
