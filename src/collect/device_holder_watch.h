// Attaches Sample.device_holders (who holds /dev/nvidia* open) when GPU
// memory is unaccounted for: NVML's used memory well above what its listed
// processes use. That is when a reader needs to know who else holds the
// GPU (a process in another PID namespace, a zombie's leftover, a process
// NVML does not list). The scan walks every fd of every process, so it runs
// at most once per interval, never on every 1 Hz sample.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/sample.h"

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

  explicit DeviceHolderWatch(std::string proc_root,
                             std::string dev_prefix = "/dev",
                             double interval_s = kIntervalSeconds,
                             uint64_t margin_bytes = kMarginBytes);

  // Sets s.device_holders when memory is unaccounted for and no scan ran in
  // the last interval (by `now`, seconds); leaves it unset otherwise.
  void attach(Sample& s, double now);

 private:
  std::string proc_root_, dev_prefix_;
  double interval_s_;
  uint64_t margin_bytes_;
  std::optional<double> last_scan_;
};

}  // namespace gd
