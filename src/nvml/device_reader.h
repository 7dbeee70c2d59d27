// Reads one GPU through NVML: its static facts (GpuInfo) and one sample
// (GpuSample). Knows NVML's return codes, units and fallback chains; knows
// nothing about threads or deadlines (gpu_source.cc runs each reader on
// its own worker thread). Not thread-safe: one thread per reader.
#pragma once

#include <chrono>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/sample.h"
#include "nvml/nvml_library.h"

namespace gd::nvml {

class DeviceReader {
 public:
  // `sysfs_root` is where /sys is (tests point it elsewhere).
  DeviceReader(const NvmlLibrary& lib, int index, std::string sysfs_root,
               std::chrono::seconds error_interval = std::chrono::seconds(60));

  GpuInfo read_info();
  // Events (gpu_lost, nvml_error) are appended to `events`.
  GpuSample read_sample(std::vector<Event>& events);

 private:
  // Return code of the last call; false unless NVML_SUCCESS. GPU_IS_LOST
  // sets lost_now_; codes that mean "not here" (NOT_SUPPORTED,
  // FUNCTION_NOT_FOUND, NO_DATA) are silent; anything else becomes a
  // rate-limited nvml_error event.
  bool ok(nvmlReturn_t rc, std::string_view function);
  // ok(), and a read that FAILED (not one the GPU does not support) adds
  // `fields` (trace names) to the sample's read_errors.
  bool read_ok(nvmlReturn_t rc, std::string_view function,
               std::initializer_list<const char*> fields);

  struct ProcessEntry {
    unsigned pid;
    unsigned long long used;
  };

  bool acquire_handle();
  void read_pci(GpuInfo& info);
  struct MemoryInfo {
    unsigned long long total = 0, used = 0;
    std::optional<unsigned long long> reserved;  // _v2 only
  };
  nvmlReturn_t read_memory(MemoryInfo& out);
  std::optional<int> numa_node_from_sysfs(const GpuInfo& info) const;
  void read_values(GpuSample& s);
  void read_memory_health(GpuSample& s);
  void read_field_values(GpuSample& s);
  std::optional<std::vector<GpuProcess>> read_processes();
  template <typename Info, typename Fn>
  nvmlReturn_t list_processes(Fn fn, std::vector<Info>& buf,
                              std::vector<ProcessEntry>& out);
  static void merge_processes(const std::vector<ProcessEntry>& entries,
                              const char* type, std::vector<GpuProcess>& out);

  const NvmlLibrary& lib_;
  const NvmlFunctions& f_;
  int index_;
  std::string sysfs_root_;
  std::chrono::seconds error_interval_;
  nvmlDevice_t dev_ = nullptr;

  bool lost_now_ = false;       // set during one read
  bool lost_reported_ = false;  // a gpu_lost event was emitted, not yet back
  std::vector<Event>* events_ = nullptr;
  std::vector<std::string>* read_errors_ = nullptr;  // of the sample read now
  std::unordered_map<std::string_view, std::chrono::steady_clock::time_point>
      last_error_;

  // Fallback chains: index of the newest variant still worth trying. A
  // variant whose symbol is missing, or that answers FUNCTION_NOT_FOUND
  // (symbol present, driver too old), moves the chain on for good.
  int compute_procs_variant_ = 0;   // 0:_v3 1:_v2 2:plain
  int graphics_procs_variant_ = 0;  // same
  int clock_reasons_variant_ = 0;   // 0:EventReasons 1:ThrottleReasons
  int memory_variant_ = 0;          // 0:_v2 1:plain

  std::vector<nvmlProcessInfo_t> procs_v3_;
  std::vector<nvmlProcessInfo_v2_t> procs_v2_;
  std::vector<nvmlProcessInfo_v1_t> procs_v1_;
  std::vector<ProcessEntry> process_entries_;
  nvmlReturn_t last_process_rc_ = NVML_SUCCESS;  // a listing that failed
};

// Vocabulary helpers (exposed for tests).
std::string architecture_name(nvmlDeviceArchitecture_t arch);
std::string compute_mode_name(nvmlComputeMode_t mode);
std::vector<std::string> clock_event_reason_names(unsigned long long bits);
// NVML's CUDA version integer (e.g. 12020) -> "12.2".
std::string cuda_version_string(int version);
// NVML_GPU_RECOVERY_ACTION_* -> trace vocabulary (kRecovery*); "" unknown.
std::string recovery_action_name(unsigned long long action);

}  // namespace gd::nvml
