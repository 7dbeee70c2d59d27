// Reads one GPU through NVML: its static facts (GpuInfo) and one sample
// (GpuSample). Knows NVML's return codes, units and fallback chains; knows
// nothing about threads or deadlines (gpu_source.cc runs each reader on
// its own worker thread). Not thread-safe: one thread per reader.
#pragma once

#include <chrono>
#include <condition_variable>
#include <initializer_list>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "model/sample.h"
#include "nvml/nvml_library.h"

namespace gd::nvml {

class DeviceReader {
 public:
  // Measured on an H100 and an H200 with driver 580 (bench/nvml): PCIe
  // throughput blocks 20 ms per direction, the energy counter takes 3.5 ms
  // of CPU, per-process utilisation 1.7-2.8 ms, GPM metrics 1.4 ms, the
  // T.Limit margin 0.9-1.1 ms, PCIe replays and BAR1 0.17 ms each;
  // everything else a sample reads costs microseconds. Read every second,
  // those few were 95% of a sample's CPU.
  static constexpr std::chrono::milliseconds kSlowReadInterval{5000};

  // `sysfs_root` is where /sys is (tests point it elsewhere).
  // Reads that cost the driver milliseconds are refreshed at most every
  // `slow_interval` (kSlowReadInterval); the samples between repeat them.
  DeviceReader(const NvmlLibrary& lib, int index, std::string sysfs_root,
               std::chrono::seconds error_interval = std::chrono::seconds(60),
               std::chrono::milliseconds slow_interval = kSlowReadInterval);
  ~DeviceReader();  // frees the GPM sample buffers
  DeviceReader(const DeviceReader&) = delete;
  DeviceReader& operator=(const DeviceReader&) = delete;

  GpuInfo read_info();
  // The pids NVML lists on the GPU now (compute and graphics), without
  // their details; empty when the listing fails. No events.
  std::vector<uint32_t> read_pids();
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
    unsigned gi = kNoInstance, ci = kNoInstance;  // MIG instance, if any
  };
  // NVML's instance id of a process that runs on no MIG instance.
  static constexpr unsigned kNoInstance = 0xFFFFFFFFu;

  bool acquire_handle();
  void read_pci(GpuInfo& info);
  // Power limits, PCIe maxima, temperature thresholds (read_info).
  void read_limits(GpuInfo& info);
  struct MemoryInfo {
    unsigned long long total = 0, used = 0;
    std::optional<unsigned long long> reserved;  // _v2 only
  };
  nvmlReturn_t read_memory(MemoryInfo& out);
  std::optional<int> numa_node_from_sysfs(const GpuInfo& info) const;
  void read_values(GpuSample& s);
  // Every read of read_values() but the utilisation and PCIe throughput.
  void read_other_values(GpuSample& s);
  // One `unsigned` out of fn(dev_, args..., &value): nullopt when the
  // function is missing, the GPU is lost, or the read fails (read_ok()).
  template <typename Fn, typename... Args>
  std::optional<unsigned> read_uint(Fn fn, std::string_view name,
                                    const char* field, Args... args);
  void read_memory_health(GpuSample& s);
  // The costly reads (kSlowReadInterval) when due, else their last values.
  void read_slow_values(GpuSample& s);
  bool slow_due() const;
  // nvmlDeviceGetProcessUtilization into process_util_ (a costly read).
  void read_process_util_samples();
  void read_field_values(GpuSample& s);
  std::optional<std::vector<GpuProcess>> read_processes();
  template <typename Info, typename Fn>
  nvmlReturn_t list_processes(Fn fn, std::vector<Info>& buf,
                              std::vector<ProcessEntry>& out);
  static void merge_processes(const std::vector<ProcessEntry>& entries,
                              const char* type, std::vector<GpuProcess>& out);
  // Per-process SM and memory utilisation (device_reader_processes.cc).
  void read_process_utilization(std::vector<GpuProcess>& procs);
  void read_engine_utilization(GpuSample& s);

  // ---- MIG (device_reader_mig.cc) ----
  void read_mig_info(GpuInfo& info);
  std::optional<std::vector<MigInstance>> read_mig_instances(bool with_used);
  const std::string& gi_profile_name(unsigned gi_id);

  // ---- NVLink and fabric (device_reader_nvlink.cc) ----
  void read_nvlink_info(GpuInfo& info);
  void read_nvlinks(GpuSample& s);
  bool read_nvlinks_by_field(GpuSample& s);
  void read_nvlinks_by_function(GpuSample& s);
  void read_fabric(GpuSample& s);

  // ---- GPM (device_reader_gpm.cc) ----
  // Two sample buffers (the interval's start and end) of the whole GPU or
  // of one GPU instance.
  struct GpmPair {
    nvmlGpmSample_t prev = nullptr, cur = nullptr;
    bool prev_valid = false;
    // The figures of the last interval: nvmlGpmMetricsGet is a costly read
    // (1.4 ms of CPU on an H200), so samples between repeat them.
    GpmActivity last;
  };
  void read_gpm_info(const GpuInfo& info);
  // Takes a new GPM sample into `pair` (whole GPU, or GPU instance `gi`)
  // and, if an earlier one exists, fills `out` with the interval's averages;
  // between the costly reads (kSlowReadInterval) `out` repeats the last.
  void read_gpm(GpmPair& pair, const unsigned* gi, GpmActivity& out,
                bool report_errors);
  void free_gpm(GpmPair& pair);

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

  // Per-process utilisation: the newest sample time seen, so each read
  // gets only newer samples; false once the GPU answers NOT_SUPPORTED.
  unsigned long long util_last_seen_us_ = 0;
  bool process_util_supported_ = true;
  std::vector<nvmlProcessUtilizationSample_t> util_buf_;
  struct ProcessUtil {
    double sm, mem;
  };
  // Each pid's figures from the last read, for the samples until the next.
  std::unordered_map<unsigned, ProcessUtil> process_util_;
  bool enc_supported_ = true, dec_supported_ = true;
  // A GPU without a fan answers NOT_SUPPORTED, still at 0.1-0.2 ms a call.
  bool fan_supported_ = true;

  // The costly reads' last values and read errors (read_slow_values).
  std::chrono::milliseconds slow_interval_;
  std::optional<std::chrono::steady_clock::time_point> slow_read_at_;
  bool slow_now_ = false;  // this sample re-reads them
  struct SlowValues {
    opt<int> temp_limit_margin_c;
    opt<uint64_t> energy_mj_total, pcie_tx_bytes_per_s, pcie_rx_bytes_per_s,
        pcie_replay_total, bar1_used_bytes;
    std::vector<std::string> read_errors;
  } slow_;
  // PCIe throughput, TX and RX, each read on a helper thread while the
  // worker makes the sample's other reads (device_reader_sample.cc). The two
  // helpers start at the first read and wait for the next: started anew
  // for each costly sample, two threads per GPU every kSlowReadInterval
  // cost `top` ~0.1 ms/s, and the pids they took made the process table
  // re-read the GPU processes' children files (a pid was allocated).
  class PcieThroughputRead {
   public:
    using PcieFn = nvmlDeviceGetPcieThroughput_fn;
    PcieThroughputRead() = default;
    PcieThroughputRead(const PcieThroughputRead&) = delete;
    PcieThroughputRead& operator=(const PcieThroughputRead&) = delete;
    // Stops the helpers. Never while one is in the driver: the worker waits
    // in join() first, and a worker stuck there is never destroyed.
    ~PcieThroughputRead();
    void start(PcieFn fn, nvmlDevice_t dev);  // nothing when fn is missing
    void join();  // until both answered (nothing when not started)
    // Whether the last start() read the counters (join() before the rest).
    bool started() const { return started_; }
    nvmlReturn_t tx_rc() const { return rc_[0]; }
    nvmlReturn_t rx_rc() const { return rc_[1]; }
    unsigned tx_kb() const { return kb_[0]; }
    unsigned rx_kb() const { return kb_[1]; }

   private:
    void watch(int direction);  // a helper: 0 TX, 1 RX

    bool started_ = false;
    std::mutex mu_;
    std::condition_variable wake_, done_;
    // Guarded by mu_: the read asked for (round_), answers not yet in.
    uint64_t round_ = 0;
    int pending_ = 0;
    bool stop_ = false;
    PcieFn fn_ = nullptr;
    nvmlDevice_t dev_{};
    nvmlReturn_t rc_[2] = {NVML_ERROR_UNKNOWN, NVML_ERROR_UNKNOWN};
    unsigned kb_[2] = {0, 0};
    std::thread helpers_[2];
  };
  PcieThroughputRead pcie_;
  // Checks the answers into slow_ and `s` (after join()).
  void finish_pcie_throughput(const PcieThroughputRead& pcie, GpuSample& s);

  // MIG: mode from the static facts; GPU instance id -> profile name
  // ("3g.40gb"), and profile id -> name, both learnt once.
  bool mig_enabled_ = false;
  std::unordered_map<unsigned, std::string> profile_names_;
  std::unordered_map<unsigned, std::string> gi_profiles_;
  struct MigIdentity {
    unsigned gi, ci;
    std::string uuid;
  };
  std::vector<MigIdentity> mig_uuids_;

  // NVLink: links the GPU has (0: none); field-values batch vs the per-link
  // functions; cumulative throughput (KiB) at its timestamp (us).
  int nvlink_count_ = 0;
  int nvlink_variant_ = 0;  // 0: nvmlDeviceGetFieldValues 1: per-link calls
  std::vector<nvmlFieldValue_t> nvlink_fields_;
  struct Throughput {
    bool valid = false;
    unsigned long long tx_kib = 0, rx_kib = 0;
    long long at_us = 0;
  } nvlink_prev_;
  bool fabric_supported_ = true;

  // GPM: supported by this GPU (Hopper and newer); the whole GPU's pair and
  // one pair per GPU instance id.
  bool gpm_supported_ = false;
  bool gpm_mig_supported_ = true;
  GpmPair gpm_gpu_;
  std::unordered_map<unsigned, GpmPair> gpm_instances_;
  nvmlGpmMetricsGet_t gpm_request_{};
};

// NVML's NVLink version enum (nvmlDeviceGetNvLinkVersion) -> the NVLink
// generation (1..5); nullopt for INVALID or a value this build does not know.
std::optional<int> nvlink_generation(unsigned nvml_version);
// "MIG 3g.40gb" (NVML's profile name) -> "3g.40gb".
std::string mig_profile_short_name(std::string_view nvml_name);

// Vocabulary helpers (exposed for tests).
std::string architecture_name(nvmlDeviceArchitecture_t arch);
// The raw value NVML wrote: one this build does not know is "".
std::string compute_mode_name(unsigned mode);
std::vector<std::string> clock_event_reason_names(unsigned long long bits);
// NVML's CUDA version integer (e.g. 12020) -> "12.2".
std::string cuda_version_string(int version);
// NVML_GPU_RECOVERY_ACTION_* -> trace vocabulary (kRecovery*); "" unknown.
std::string recovery_action_name(unsigned long long action);

}  // namespace gd::nvml
