#include "collect/device_holder_watch.h"

#include "procfs/device_fd_scan.h"

namespace gd {

bool gpu_memory_unaccounted(const std::vector<GpuSample>& gpus,
                            uint64_t margin_bytes) {
  for (const GpuSample& g : gpus) {
    if (g.lost || g.stale || !g.mem_used_bytes || !g.processes) continue;
    uint64_t listed = 0;
    bool known = true;
    for (const GpuProcess& p : *g.processes) {
      if (!p.used_bytes) known = false;
      listed += p.used_bytes.value_or(0);
    }
    if (known && *g.mem_used_bytes > listed + margin_bytes) return true;
  }
  return false;
}

DeviceHolderWatch::DeviceHolderWatch(std::string proc_root,
                                     std::string dev_prefix, double interval_s,
                                     uint64_t margin_bytes)
    : proc_root_(std::move(proc_root)),
      dev_prefix_(std::move(dev_prefix)),
      interval_s_(interval_s),
      margin_bytes_(margin_bytes) {}

void DeviceHolderWatch::attach(Sample& s, double now) {
  s.device_holders.reset();
  if (last_scan_ && now - *last_scan_ < interval_s_ && now >= *last_scan_)
    return;
  if (!gpu_memory_unaccounted(s.gpus, margin_bytes_)) return;
  last_scan_ = now;
  s.device_holders =
      procfs::scan_nvidia_device_fds(proc_root_, dev_prefix_).holders;
}

}  // namespace gd
