// Attaches Sample.device_holders (who holds /dev/nvidia* open) when GPU
// memory is unaccounted for: NVML's used memory well above what its listed
// processes use, or a listed process that is gone or a zombie (its memory
// stays while a forked child still holds the device files). That is when a
// reader needs to know who else holds the GPU. A full scan walks every fd
// of every process, so it runs at most once per interval; between full
// scans only the holders it found are looked at again (their fds alone), so
// each sample says who still holds what.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/sample.h"
#include "procfs/kept_file.h"

namespace gd {

// True when some readable GPU's used memory exceeds the sum of its listed
// processes' used_bytes by more than `margin_bytes`. A GPU whose process
// list or any process's usage is unknown cannot be accounted: it does not
// count either way.
bool gpu_memory_unaccounted(const std::vector<GpuSample>& gpus,
                            uint64_t margin_bytes);

class DeviceHolderWatch {
 public:
  // More than the driver's own reservation on any GPU (a few hundred MiB),
  // less than the smallest CUDA context a process holds.
  static constexpr uint64_t kMarginBytes = 1ull << 30;
  // Once per half minute: a leftover that matters stays for longer.
  static constexpr double kIntervalSeconds = 30;
  // Bounds of what a sample carries: holders, and the CUDA-file holders
  // whose process entries it carries too.
  static constexpr size_t kMaxHolders = 64;
  static constexpr size_t kMaxProcessesOfHolders = 16;

  explicit DeviceHolderWatch(std::string proc_root,
                             std::string dev_prefix = "/dev",
                             double interval_s = kIntervalSeconds,
                             uint64_t margin_bytes = kMarginBytes);

  // Call before the sample's processes are read. Sets s.device_holders
  // when memory is unaccounted for (a full scan when none ran in the last
  // interval, by `now` in seconds, else a look at the holders of the last
  // one); leaves it unset otherwise. Returns the holders of CUDA files
  // (nvidia-uvm) that NVML lists on no GPU: the sample should carry their
  // process entries, so that a reader of the trace can name them.
  std::vector<uint32_t> attach(Sample& s, double now);

  // Whether attach() would look at all: some GPU's memory is unaccounted
  // for, or NVML lists a process that is gone or a zombie.
  bool memory_orphaned(const std::vector<GpuSample>& gpus) const;

  // Whether one of `pids` holds a CUDA file (nvidia-uvm) while NVML lists
  // it on no GPU of `s`: a process attach() would return. Costs the fds of
  // `pids` only, not every process's.
  bool any_unlisted_cuda_holder(const Sample& s,
                                const std::vector<uint32_t>& pids) const;

 private:
  std::string proc_root_, dev_prefix_;
  double interval_s_;
  uint64_t margin_bytes_;
  // Whether listed GPU process `pid` is gone or a zombie, through its stat
  // file kept open from sample to sample (memory_orphaned runs every
  // sample: opening 8 GPU processes' stat each second cost more than
  // reading them).
  bool listed_process_dead(uint32_t pid) const;

  std::optional<double> last_scan_;
  std::vector<uint32_t> known_;  // holders found by the last look
  // The listed GPU processes' stat files; those of pids no longer listed
  // are closed at the next look. Bounded by what NVML lists (kMaxKept).
  static constexpr size_t kMaxKept = 256;
  mutable std::unordered_map<uint32_t, procfs::KeptFile> listed_stat_;
  mutable std::string stat_text_;
};

}  // namespace gd
