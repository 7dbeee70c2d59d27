// GPU side of a sample, through NVML loaded with dlopen (never linked).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model/sample.h"
#include "nvml/device_reader.h"

namespace gd {

class GpuSource {
 public:
  // Everything the constructor can be told; the defaults are production's.
  struct Options {
    std::string lib_path = "libnvidia-ml.so.1";
    // Bound on one sample() (all GPUs are read in parallel).
    std::chrono::milliseconds deadline{1000};
    // Bound on each init phase (dlopen + nvmlInit, then static facts);
    // 0 = `deadline`, with dlopen + nvmlInit given at least
    // kLoadDeadlineFloor: without persistence mode the driver initialises
    // each GPU at nvmlInit, by NVIDIA's account 1-3 s a GPU (ECC
    // scrubbing), and a read deadline of a second would call a healthy
    // node's NVML broken.
    std::chrono::milliseconds init_deadline{0};
    static constexpr std::chrono::milliseconds kLoadDeadlineFloor{20000};
    // Where /sys is mounted (numa_node of each GPU's PCI device).
    std::string sysfs_root = "/sys";
    // Treat these NVML symbols as missing (tests of the fallback chains).
    std::set<std::string> hidden_symbols;
    // An nvml_error event is repeated at most this often per function per GPU.
    std::chrono::seconds error_interval{60};
    // The reads that cost the driver milliseconds are refreshed at most this
    // often (DeviceReader::kSlowReadInterval); 0 = every sample.
    std::chrono::milliseconds slow_read_interval =
        nvml::DeviceReader::kSlowReadInterval;
  };
  // dlopen(lib_path) and nvmlInit, both bounded by the init deadline. Never
  // throws for a missing/broken driver: status() says what happened. (There
  // is no shortcut taking only some options: one let --sys-root get lost.)
  explicit GpuSource(Options options);
  GpuSource();  // production defaults
  ~GpuSource();
  GpuSource(const GpuSource&) = delete;
  GpuSource& operator=(const GpuSource&) = delete;

  // nvml_status vocabulary of trace-format.md: ok, no_driver,
  // driver_library_mismatch, insufficient_permissions, error.
  const std::string& status() const;
  const std::string& error() const;  // NVML's text for status "error"
  const std::optional<DriverInfo>& driver() const;
  // Version of the libnvidia-ml file loaded ("" unknown), also when nvmlInit
  // failed and driver() is empty.
  const std::string& library_version() const;
  const std::vector<GpuInfo>& gpus() const;
  // The pids NVML listed on any GPU when the static facts were read, in
  // order: a command that samples once gives them their first process
  // reading while the GPUs are read (Sampler::sample_once).
  const std::vector<uint32_t>& initial_pids() const;

  // Reads every GPU. Each GPU's read runs off the caller's thread and is
  // bounded by the deadline: a GPU whose read has not finished comes back as
  // {index, stale=true} and an `nvml_error` event is appended; a GPU still
  // hung from an earlier sample is not read again until its read returns.
  // GPU_IS_LOST gives {index, lost=true} and a `gpu_lost` event (once).
  std::vector<GpuSample> sample(std::vector<Event>& events);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gd
