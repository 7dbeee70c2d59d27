// Names and units as dcgm-exporter's etc/default-counters.csv and
// dcp-metrics-included.csv give them (framebuffer in MiB, power in W,
// energy in mJ, profiling fields as ratios 0..1), node_exporter's as its
// collectors name them, and serve's own as src/exporter/ writes them.
#include "promsource/series_table.h"

#include <cmath>
#include <cstdint>
#include <limits>

#include "model/limits.h"

namespace gd::promsource {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// A whole number of type T, nullopt when `v` is not one in T's range.
template <typename T>
opt<T> whole(double v) {
  if (!std::isfinite(v) ||
      v < static_cast<double>(std::numeric_limits<T>::min()) ||
      v >= static_cast<double>(std::numeric_limits<T>::max()))
    return std::nullopt;
  return static_cast<T>(std::llround(v));
}

opt<uint64_t> count(double v) {
  // A counter past 2^63 is garbage, not a count.
  if (!std::isfinite(v) || v < 0 || v >= 9.2e18) return std::nullopt;
  return static_cast<uint64_t>(std::llround(v));
}

opt<uint64_t> mib(double v) { return count(v * kMiB); }

// NVML's nvmlClocksThrottleReason* bits (DCGM passes them on unchanged).
constexpr std::pair<uint64_t, const char*> kReasonBits[] = {
    {0x1, "gpu_idle"},
    {0x2, "applications_clocks_setting"},
    {0x4, "sw_power_cap"},
    {0x8, "hw_slowdown"},
    {0x10, "sync_boost"},
    {0x20, "sw_thermal_slowdown"},
    {0x40, "hw_thermal_slowdown"},
    {0x80, "hw_power_brake_slowdown"},
    {0x100, "display_clock_setting"},
};

// $I: the node's node_exporter matcher; $W: the rate window; $S(m): serve's
// series m of the node (read_node.h's query_of).
// The setters, one line each; the table below says which field is which.
#define GPU(expr) [](GpuSample& g, double v) { expr; }
#define HOST(expr) [](HostSample& h, double v) { expr; }
#define GPU_PROC(expr) [](GpuProcess& p, double v) { expr; }

const Entry kEntries[] = {
    // ---- per GPU: dcgm-exporter, and serve's /metrics -------------------
    {"util_pct", Scope::kGpu, Kind::kSample, "DCGM_FI_DEV_GPU_UTIL",
     GPU(g.util_pct = v)},
    {"mem_util_pct", Scope::kGpu, Kind::kSample, "DCGM_FI_DEV_MEM_COPY_UTIL",
     GPU(g.mem_util_pct = v)},
    {"enc_util_pct", Scope::kGpu, Kind::kSample, "DCGM_FI_DEV_ENC_UTIL",
     GPU(g.enc_util_pct = v)},
    {"dec_util_pct", Scope::kGpu, Kind::kSample, "DCGM_FI_DEV_DEC_UTIL",
     GPU(g.dec_util_pct = v)},
    // serve's bytes are exact; DCGM's MiB are rounded down.
    {"mem_used_bytes", Scope::kGpu, Kind::kSample,
     "gpudoctor_gpu_memory_used_bytes", GPU(g.mem_used_bytes = count(v))},
    {"mem_used_bytes", Scope::kGpu, Kind::kSample, "DCGM_FI_DEV_FB_USED",
     GPU(g.mem_used_bytes = mib(v))},
    {"mem_reserved_bytes", Scope::kGpu, Kind::kSample,
     "DCGM_FI_DEV_FB_RESERVED", GPU(g.mem_reserved_bytes = mib(v))},
    {"temp_c", Scope::kGpu, Kind::kSample, "DCGM_FI_DEV_GPU_TEMP",
     GPU(g.temp_c = whole<int>(v))},
    {"mem_temp_c", Scope::kGpu, Kind::kSample, "DCGM_FI_DEV_MEMORY_TEMP",
     GPU(g.mem_temp_c = whole<int>(v))},
    {"power_w", Scope::kGpu, Kind::kSample, "DCGM_FI_DEV_POWER_USAGE",
     GPU(g.power_w = v)},
    {"energy_mj_total", Scope::kGpu, Kind::kSample,
     "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", GPU(g.energy_mj_total = count(v))},
    {"fan_pct", Scope::kGpu, Kind::kSample, "DCGM_FI_DEV_FAN_SPEED",
     GPU(g.fan_pct = v)},
    {"sm_clock_mhz", Scope::kGpu, Kind::kSample, "DCGM_FI_DEV_SM_CLOCK",
     GPU(g.sm_clock_mhz = whole<int>(v))},
    {"mem_clock_mhz", Scope::kGpu, Kind::kSample, "DCGM_FI_DEV_MEM_CLOCK",
     GPU(g.mem_clock_mhz = whole<int>(v))},
    {"pstate", Scope::kGpu, Kind::kSample, "DCGM_FI_DEV_PSTATE",
     GPU(g.pstate = whole<int>(v))},
    // The older name (dcgm-exporter before 3.3, and serve), then the newer.
    {"clock_event_reasons", Scope::kGpu, Kind::kSample,
     "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS",
     GPU(g.clock_event_reasons = clock_event_reasons(v))},
    {"clock_event_reasons", Scope::kGpu, Kind::kSample,
     "DCGM_FI_DEV_CLOCKS_EVENT_REASONS",
     GPU(g.clock_event_reasons = clock_event_reasons(v))},
    {"pcie_gen", Scope::kGpu, Kind::kSample, "gpudoctor_pcie_link_generation",
     GPU(g.pcie_gen = whole<int>(v))},
    {"pcie_gen", Scope::kGpu, Kind::kSample, "DCGM_FI_DEV_PCIE_LINK_GEN",
     GPU(g.pcie_gen = whole<int>(v))},
    {"pcie_width", Scope::kGpu, Kind::kSample, "gpudoctor_pcie_link_width",
     GPU(g.pcie_width = whole<int>(v))},
    {"pcie_width", Scope::kGpu, Kind::kSample, "DCGM_FI_DEV_PCIE_LINK_WIDTH",
     GPU(g.pcie_width = whole<int>(v))},
    {"pcie_tx_bytes_per_s", Scope::kGpu, Kind::kSample,
     "DCGM_FI_PROF_PCIE_TX_BYTES", GPU(g.pcie_tx_bytes_per_s = count(v))},
    {"pcie_rx_bytes_per_s", Scope::kGpu, Kind::kSample,
     "DCGM_FI_PROF_PCIE_RX_BYTES", GPU(g.pcie_rx_bytes_per_s = count(v))},
    {"pcie_replay_total", Scope::kGpu, Kind::kSample,
     "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", GPU(g.pcie_replay_total = count(v))},
    {"ecc_sbe_volatile_total", Scope::kGpu, Kind::kSample,
     "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", GPU(g.ecc_sbe_volatile_total = count(v))},
    {"ecc_dbe_volatile_total", Scope::kGpu, Kind::kSample,
     "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", GPU(g.ecc_dbe_volatile_total = count(v))},
    {"ecc_sbe_aggregate_total", Scope::kGpu, Kind::kSample,
     "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL",
     GPU(g.ecc_sbe_aggregate_total = count(v))},
    {"ecc_dbe_aggregate_total", Scope::kGpu, Kind::kSample,
     "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL",
     GPU(g.ecc_dbe_aggregate_total = count(v))},
    {"remapped_rows_failure", Scope::kGpu, Kind::kSample,
     "DCGM_FI_DEV_ROW_REMAP_FAILURE", GPU(g.remapped_rows_failure = v != 0)},
    {"remapped_rows_uncorrectable_total", Scope::kGpu, Kind::kSample,
     "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
     GPU(g.remapped_rows_uncorrectable_total = count(v))},
    {"remapped_rows_correctable_total", Scope::kGpu, Kind::kSample,
     "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",
     GPU(g.remapped_rows_correctable_total = count(v))},
    {"remapped_rows_pending", Scope::kGpu, Kind::kSample,
     "gpudoctor_remapped_rows_pending", GPU(g.remapped_rows_pending = v != 0)},
    // Profiling fields: ratios 0..1 in DCGM, percentages in the model.
    {"gpm.gr_engine_active_pct", Scope::kGpu, Kind::kSample,
     "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
     GPU(g.gpm.gr_engine_active_pct = 100 * v)},
    {"gpm.sm_active_pct", Scope::kGpu, Kind::kSample, "DCGM_FI_PROF_SM_ACTIVE",
     GPU(g.gpm.sm_active_pct = 100 * v)},
    {"gpm.sm_occupancy_pct", Scope::kGpu, Kind::kSample,
     "DCGM_FI_PROF_SM_OCCUPANCY", GPU(g.gpm.sm_occupancy_pct = 100 * v)},
    {"gpm.tensor_active_pct", Scope::kGpu, Kind::kSample,
     "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", GPU(g.gpm.tensor_active_pct = 100 * v)},
    {"gpm.dram_active_pct", Scope::kGpu, Kind::kSample,
     "DCGM_FI_PROF_DRAM_ACTIVE", GPU(g.gpm.dram_active_pct = 100 * v)},
    {"gpm.fp64_active_pct", Scope::kGpu, Kind::kSample,
     "DCGM_FI_PROF_PIPE_FP64_ACTIVE", GPU(g.gpm.fp64_active_pct = 100 * v)},
    {"gpm.fp32_active_pct", Scope::kGpu, Kind::kSample,
     "DCGM_FI_PROF_PIPE_FP32_ACTIVE", GPU(g.gpm.fp32_active_pct = 100 * v)},
    {"gpm.fp16_active_pct", Scope::kGpu, Kind::kSample,
     "DCGM_FI_PROF_PIPE_FP16_ACTIVE", GPU(g.gpm.fp16_active_pct = 100 * v)},
    // Bytes per second of all links. DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL is
    // left out: it adds both directions, which the model keeps apart.
    {"nvlink_tx_bytes_per_s", Scope::kGpu, Kind::kSample,
     "DCGM_FI_PROF_NVLINK_TX_BYTES", GPU(g.nvlink_tx_bytes_per_s = count(v))},
    {"nvlink_rx_bytes_per_s", Scope::kGpu, Kind::kSample,
     "DCGM_FI_PROF_NVLINK_RX_BYTES", GPU(g.nvlink_rx_bytes_per_s = count(v))},
    {"xid", Scope::kGpu, Kind::kXid, "DCGM_FI_DEV_XID_ERRORS"},
    // ---- per GPU, the header -------------------------------------------
    {"memory_total_bytes", Scope::kGpu, Kind::kFact,
     "gpudoctor_gpu_memory_total_bytes", nullptr, nullptr,
     [](GpuInfo& i, double v) { i.memory_total_bytes = count(v); }},
    {"memory_total_bytes", Scope::kGpu, Kind::kFact, "DCGM_FI_DEV_FB_TOTAL",
     nullptr, nullptr,
     [](GpuInfo& i, double v) { i.memory_total_bytes = mib(v); }},
    {"power_limit_w", Scope::kGpu, Kind::kFact, "DCGM_FI_DEV_POWER_MGMT_LIMIT",
     nullptr, nullptr,
     [](GpuInfo& i, double v) {
       // One past what a GPU can draw (1e308) is no limit: left out.
       if (v >= 0 && v <= kMaxPowerLimitW) i.power_limit_w = v;
     }},
    {"sm_clock_max_mhz", Scope::kGpu, Kind::kFact,
     "gpudoctor_gpu_sm_clock_max_mhz", nullptr, nullptr,
     [](GpuInfo& i, double v) { i.sm_clock_max_mhz = whole<int>(v); }},
    {"pcie_max_gen", Scope::kGpu, Kind::kFact,
     "gpudoctor_pcie_link_max_generation", nullptr, nullptr,
     [](GpuInfo& i, double v) { i.pcie_max_gen = whole<int>(v); }},
    {"pcie_max_width", Scope::kGpu, Kind::kFact,
     "gpudoctor_pcie_link_max_width", nullptr, nullptr,
     [](GpuInfo& i, double v) { i.pcie_max_width = whole<int>(v); }},
    {"pcie_max_gen", Scope::kGpu, Kind::kFact, "DCGM_FI_DEV_PCIE_MAX_LINK_GEN",
     nullptr, nullptr,
     [](GpuInfo& i, double v) { i.pcie_max_gen = whole<int>(v); }},
    {"pcie_max_width", Scope::kGpu, Kind::kFact,
     "DCGM_FI_DEV_PCIE_MAX_LINK_WIDTH", nullptr, nullptr,
     [](GpuInfo& i, double v) { i.pcie_max_width = whole<int>(v); }},
    // After the exact totals: used + free leaves out what the driver keeps.
    {"memory_total_bytes", Scope::kGpu, Kind::kFbFree, "DCGM_FI_DEV_FB_FREE"},
    // ---- per process: serve's (dcgm-exporter has none) -----------------
    // The list first: the per-process values fill the lists it opened.
    {"processes", Scope::kProcess, Kind::kProcessList,
     "gpudoctor_gpu_processes"},
    {"processes.used_bytes", Scope::kProcess, Kind::kSample,
     "gpudoctor_process_gpu_memory_bytes", nullptr, nullptr, nullptr, nullptr,
     GPU_PROC(p.used_bytes = count(v))},
    {"processes.sm_util_pct", Scope::kProcess, Kind::kSample,
     "gpudoctor_process_sm_utilization_percent", nullptr, nullptr, nullptr,
     nullptr, GPU_PROC(p.sm_util_pct = v)},
    {"processes.mem_util_pct", Scope::kProcess, Kind::kSample,
     "gpudoctor_process_memory_utilization_percent", nullptr, nullptr, nullptr,
     nullptr, GPU_PROC(p.mem_util_pct = v)},
    {"process.state", Scope::kProcess, Kind::kDeadProcess,
     "gpudoctor_process_dead"},
    // The GPU jobs' processes and their workers, with their parents.
    {"process.cpu_pct", Scope::kProcess, Kind::kSample,
     "gpudoctor_process_tree_cpu_percent", nullptr, nullptr, nullptr, nullptr,
     nullptr, [](ProcessSample& p, double v) { p.cpu_pct = v; }},
    // ---- the node: node_exporter, then serve's own ---------------------
    // One query for the three CPU shares (node_window.cc's add_cpu_modes):
    // a share per query evaluated the rate of every CPU's every mode twice
    // each, 80% of the server's work for a node read by remote read.
    {"cpu_util_pct", Scope::kHost, Kind::kCpuModes,
     "sum by (mode) (rate(node_cpu_seconds_total{$I}$W))"},
    {"cpu_util_pct", Scope::kHost, Kind::kSample,
     "max($S(gpudoctor_host_cpu_utilization_percent))", nullptr,
     HOST(h.cpu_util_pct = v)},
    {"cpu_iowait_pct", Scope::kHost, Kind::kSample,
     "max($S(gpudoctor_host_cpu_iowait_percent))", nullptr,
     HOST(h.cpu_iowait_pct = v)},
    {"cpu_steal_pct", Scope::kHost, Kind::kSample,
     "max($S(gpudoctor_host_cpu_steal_percent))", nullptr,
     HOST(h.cpu_steal_pct = v)},
    {"load1", Scope::kHost, Kind::kSample, "max(node_load1{$I})", nullptr,
     HOST(h.load1 = v)},
    {"mem_available_bytes", Scope::kHost, Kind::kSample,
     "max(node_memory_MemAvailable_bytes{$I})", nullptr,
     HOST(h.mem_available_bytes = count(v))},
    {"mem_available_bytes", Scope::kHost, Kind::kSample,
     "max($S(gpudoctor_host_memory_available_bytes))", nullptr,
     HOST(h.mem_available_bytes = count(v))},
    {"swap_used_bytes", Scope::kHost, Kind::kSample,
     "max(node_memory_SwapTotal_bytes{$I}) - "
     "max(node_memory_SwapFree_bytes{$I})",
     nullptr, HOST(h.swap_used_bytes = count(v))},
    {"swap_in_pages_per_s", Scope::kHost, Kind::kSample,
     "sum(rate(node_vmstat_pswpin{$I}$W))", nullptr,
     HOST(h.swap_in_pages_per_s = v)},
    {"swap_out_pages_per_s", Scope::kHost, Kind::kSample,
     "sum(rate(node_vmstat_pswpout{$I}$W))", nullptr,
     HOST(h.swap_out_pages_per_s = v)},
    // The busiest disk, as the procfs source reports it.
    {"disk_busy_pct", Scope::kHost, Kind::kSample,
     "100 * max(rate(node_disk_io_time_seconds_total{$I}$W))", nullptr,
     HOST(h.disk_busy_pct = v)},
    {"disk_read_bytes_per_s", Scope::kHost, Kind::kSample,
     "sum(rate(node_disk_read_bytes_total{$I}$W))", nullptr,
     HOST(h.disk_read_bytes_per_s = count(v))},
    {"disk_write_bytes_per_s", Scope::kHost, Kind::kSample,
     "sum(rate(node_disk_written_bytes_total{$I}$W))", nullptr,
     HOST(h.disk_write_bytes_per_s = count(v))},
    // node_exporter's *_waiting_seconds_total count PSI's "some" stall
    // time: its rate is the share of time, averaged over the window.
    {"psi_cpu_some_pct", Scope::kHost, Kind::kSample,
     "100 * max(rate(node_pressure_cpu_waiting_seconds_total{$I}$W))", nullptr,
     HOST(h.psi_cpu_some_pct = v)},
    {"psi_mem_some_pct", Scope::kHost, Kind::kSample,
     "100 * max(rate(node_pressure_memory_waiting_seconds_total{$I}$W))",
     nullptr, HOST(h.psi_mem_some_pct = v)},
    {"psi_io_some_pct", Scope::kHost, Kind::kSample,
     "100 * max(rate(node_pressure_io_waiting_seconds_total{$I}$W))", nullptr,
     HOST(h.psi_io_some_pct = v)},
    // ---- the node, the header ------------------------------------------
    {"mem_total_bytes", Scope::kHost, Kind::kFact,
     "max(node_memory_MemTotal_bytes{$I})", nullptr, nullptr, nullptr,
     [](HostInfo& i, double v) { i.mem_total_bytes = count(v); }},
    {"mem_total_bytes", Scope::kHost, Kind::kFact,
     "max($S(gpudoctor_host_memory_total_bytes))", nullptr, nullptr, nullptr,
     [](HostInfo& i, double v) { i.mem_total_bytes = count(v); }},
    {"swap_total_bytes", Scope::kHost, Kind::kFact,
     "max(node_memory_SwapTotal_bytes{$I})", nullptr, nullptr, nullptr,
     [](HostInfo& i, double v) { i.swap_total_bytes = count(v); }},
    {"cpu_count", Scope::kHost, Kind::kFact,
     "count(node_cpu_seconds_total{mode=\"idle\",$I})", nullptr, nullptr,
     nullptr, [](HostInfo& i, double v) { i.cpu_count = whole<int>(v); }},
};

#undef GPU
#undef HOST
#undef GPU_PROC
#undef GD_CPU_SHARE

}  // namespace

std::span<const Entry> entries() { return kEntries; }

opt<std::vector<std::string>> clock_event_reasons(double mask) {
  auto bits = count(mask);
  if (!bits || static_cast<double>(*bits) != mask) return std::nullopt;
  std::vector<std::string> out;
  for (const auto& [bit, name] : kReasonBits)
    if (*bits & bit) out.emplace_back(name);
  return out;
}

}  // namespace gd::promsource
