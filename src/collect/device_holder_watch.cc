#include "collect/device_holder_watch.h"

#include <algorithm>

#include "procfs/device_fd_scan.h"
#include "procfs/process_files.h"

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

bool DeviceHolderWatch::listed_process_dead(uint32_t pid) const {
  auto it = listed_stat_.find(pid);
  if (it == listed_stat_.end()) {
    if (listed_stat_.size() >= kMaxKept)
      return procfs::process_dead(proc_root_, pid);
    it = listed_stat_.try_emplace(pid).first;
  }
  procfs::KeptFile& file = it->second;
  const std::string path =
      file.pins_process() ? std::string()  // read through the descriptor
                          : proc_root_ + "/" + std::to_string(pid) + "/stat";
  if (!file.read(path.c_str(), stat_text_, procfs::Ending::kShortRead))
    return true;  // gone (a reused pid is opened afresh next time)
  auto st = procfs::parse_pid_stat(stat_text_);
  return !st || st->state == 'Z' || st->state == 'X';
}

bool DeviceHolderWatch::memory_orphaned(
    const std::vector<GpuSample>& gpus) const {
  // Files of pids no longer listed are closed.
  std::erase_if(listed_stat_, [&gpus](const auto& kv) {
    for (const GpuSample& g : gpus)
      if (g.processes)
        for (const GpuProcess& p : *g.processes)
          if (p.pid == kv.first) return false;
    return true;
  });
  if (gpu_memory_unaccounted(gpus, margin_bytes_)) return true;
  for (const GpuSample& g : gpus)
    if (!g.lost && !g.stale && g.processes)
      for (const GpuProcess& p : *g.processes)
        if (listed_process_dead(p.pid)) return true;
  return false;
}

bool DeviceHolderWatch::any_unlisted_cuda_holder(
    const Sample& s, const std::vector<uint32_t>& pids) const {
  if (pids.empty()) return false;
  auto listed = [&s](uint32_t pid) {
    for (const GpuSample& g : s.gpus)
      if (g.processes)
        for (const GpuProcess& p : *g.processes)
          if (p.pid == pid) return true;
    return false;
  };
  for (const DeviceHolder& h :
       procfs::scan_nvidia_device_fds_of(proc_root_, dev_prefix_, pids).holders)
    if (std::find(h.devices.begin(), h.devices.end(), "nvidia-uvm") !=
            h.devices.end() &&
        !listed(h.pid))
      return true;
  return false;
}

std::vector<uint32_t> DeviceHolderWatch::attach(Sample& s, double now) {
  s.device_holders.reset();
  const bool due =
      !last_scan_ || now - *last_scan_ >= interval_s_ || now < *last_scan_;
  if (!due && known_.empty()) return {};
  if (!memory_orphaned(s.gpus)) {
    known_.clear();
    return {};
  }
  procfs::DeviceFdScan scan;
  if (due) {
    last_scan_ = now;
    scan = procfs::scan_nvidia_device_fds(proc_root_, dev_prefix_);
  } else {
    scan = procfs::scan_nvidia_device_fds_of(proc_root_, dev_prefix_, known_);
  }
  std::vector<DeviceHolder>& holders = scan.holders;
  // CUDA clients (nvidia-uvm) first: they are what a reader looks for.
  auto cuda = [](const DeviceHolder& h) {
    return std::find(h.devices.begin(), h.devices.end(), "nvidia-uvm") !=
           h.devices.end();
  };
  std::stable_partition(holders.begin(), holders.end(), cuda);
  if (holders.size() > kMaxHolders) holders.resize(kMaxHolders);

  std::vector<uint32_t> listed;
  for (const GpuSample& g : s.gpus)
    if (g.processes)
      for (const GpuProcess& p : *g.processes) listed.push_back(p.pid);
  known_.clear();
  std::vector<uint32_t> carry;
  for (const DeviceHolder& h : holders) {
    known_.push_back(h.pid);
    if (cuda(h) && carry.size() < kMaxProcessesOfHolders &&
        std::find(listed.begin(), listed.end(), h.pid) == listed.end())
      carry.push_back(h.pid);
  }
  std::sort(holders.begin(), holders.end(),
            [](const DeviceHolder& a, const DeviceHolder& b) {
              return a.pid < b.pid;
            });
  s.device_holders = std::move(holders);
  return carry;
}

}  // namespace gd
