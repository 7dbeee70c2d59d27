// The one data model of gpudoctor (docs/trace-format.md, version 1).
// Collectors fill it, the trace writer/reader serialise it, every consumer
// (diagnose, exporter, store, TUI, CLI) reads it.
//
// Rule: std::optional empty == the field was absent/null == "unknown / not
// supported". Never substitute 0 for unknown.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gd {

template <typename T>
using opt = std::optional<T>;

// ---- header (trace line 1) -------------------------------------------------

struct HostInfo {
  std::string hostname;
  std::string kernel;
  std::string cpu_model;
  opt<int> cpu_count;
  opt<uint64_t> mem_total_bytes;
  opt<uint64_t> swap_total_bytes;
  std::string pid_namespace;  // "host", "container" or "" (unknown = host)
};

struct DriverInfo {
  std::string driver_version;       // "535.129.03"
  std::string cuda_driver_version;  // "12.2"
  std::string nvml_version;         // "12.535.129.03"
};

struct GpuInfo {
  int index = 0;
  std::string uuid, name, pci_bus_id, serial;
  opt<uint64_t> memory_total_bytes;
  opt<double> power_limit_w, power_default_limit_w;
  opt<int> pcie_max_gen, pcie_max_width;
  opt<int> temp_slowdown_c, temp_shutdown_c;
  opt<int> sm_clock_max_mhz, mem_clock_max_mhz;
  std::string compute_capability;  // "8.0", "" unknown
  std::string architecture;        // "ampere", "" unknown
  opt<bool> ecc_enabled, mig_enabled, persistence_mode;
  std::string compute_mode;  // default|exclusive_process|prohibited|""
  opt<int> numa_node;
};

// nvml_status values of the header.
inline constexpr const char* kNvmlOk = "ok";
inline constexpr const char* kNvmlNoDriver = "no_driver";
inline constexpr const char* kNvmlDriverMismatch = "driver_library_mismatch";
inline constexpr const char* kNvmlNoPermission = "insufficient_permissions";
inline constexpr const char* kNvmlError = "error";

struct TraceHeader {
  int version = 1;
  HostInfo host;
  std::string nvml_status = kNvmlOk;
  std::string nvml_error;     // NVML's text when nvml_status == "error"
  opt<DriverInfo> driver;     // nullopt when NVML could not be used
  std::vector<GpuInfo> gpus;  // [] when NVML could not be used
  // Fake-NVML scenarios only: the raw JSON text of header "faults" (kept
  // verbatim so the fake can interpret it; "" when absent).
  std::string faults_json;
};

// ---- sample (every later line) --------------------------------------------

struct GpuProcess {
  uint32_t pid = 0;
  opt<uint64_t> used_bytes;
  std::string type = "compute";  // compute|graphics|compute+graphics
};

struct GpuSample {
  int index = 0;
  bool lost = false;   // {"index": i, "lost": true}: no other field is set
  bool stale = false;  // project extension: the read missed its deadline
                       // (hung driver call); other fields are unset.
  opt<double> util_pct, mem_util_pct;
  opt<uint64_t> mem_used_bytes;
  opt<int> temp_c, mem_temp_c;
  opt<double> power_w;
  opt<uint64_t> energy_mj_total;
  opt<double> fan_pct;
  opt<int> sm_clock_mhz, mem_clock_mhz, pstate;
  // nullopt = unknown; empty vector = none active.
  opt<std::vector<std::string>> clock_event_reasons;
  opt<int> pcie_gen, pcie_width;
  opt<uint64_t> pcie_tx_bytes_per_s, pcie_rx_bytes_per_s, pcie_replay_total;
  opt<uint64_t> ecc_sbe_volatile_total, ecc_dbe_volatile_total;
  opt<bool> retired_pages_pending, remapped_rows_pending, remapped_rows_failure;
  opt<std::vector<GpuProcess>> processes;  // nullopt = could not be listed
};

struct HostSample {
  opt<double> cpu_util_pct, cpu_iowait_pct, cpu_steal_pct, load1;
  opt<uint64_t> mem_available_bytes, swap_used_bytes;
  opt<double> swap_in_pages_per_s, swap_out_pages_per_s;
  opt<uint64_t> disk_read_bytes_per_s, disk_write_bytes_per_s;
  opt<double> disk_busy_pct;
  // Project extensions (trace-format allows added fields): PSI "some avg10"
  // from /proc/pressure/{cpu,memory,io} where present.
  opt<double> psi_cpu_some_pct, psi_mem_some_pct, psi_io_some_pct;
};

struct ProcessSample {
  uint32_t pid = 0;
  opt<uint32_t> ppid;
  std::string user, name, cmdline;
  std::string
      state;  // R,S,D,Z,T,... or "missing" (NVML lists it, /proc does not)
  opt<double> cpu_pct;
  opt<int> threads;
  opt<uint64_t> rss_bytes;
  opt<std::string> cgroup;
  std::vector<std::string> libs;
  // Project extension: process start as Unix seconds (for elapsed time).
  opt<double> start_time;
};

struct Event {
  std::string kind;  // xid | oom_kill | gpu_lost | nvml_error
  opt<int> gpu;
  opt<int> code;
  opt<uint32_t> pid;
  std::string text;
};

struct Sample {
  double t = 0;
  std::vector<GpuSample> gpus;
  HostSample host;
  std::vector<ProcessSample> processes;
  std::vector<Event> events;
};

}  // namespace gd
