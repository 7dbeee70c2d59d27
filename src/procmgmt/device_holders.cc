#include "procmgmt/device_holders.h"

#include <algorithm>
#include <cctype>

#include "procfs/device_fd_scan.h"

namespace gd::procmgmt {

bool DeviceHolder::holds_gpu(int minor) const {
  std::string want = "nvidia" + std::to_string(minor);
  return std::find(devices.begin(), devices.end(), want) != devices.end();
}

bool DeviceHolder::gpu_unknown() const {
  return std::none_of(devices.begin(), devices.end(), [](const std::string& d) {
    return d.size() > 6 && std::isdigit(static_cast<unsigned char>(d[6]));
  });
}

std::string nvidia_device_name(const std::string& target,
                               const std::string& dev_prefix) {
  return procfs::nvidia_device_name(target, dev_prefix);
}

DeviceScan scan_device_holders(const std::string& proc_root,
                               const std::string& dev_prefix) {
  procfs::DeviceFdScan fds =
      procfs::scan_nvidia_device_fds(proc_root, dev_prefix);
  DeviceScan scan;
  scan.unreadable = std::move(fds.unreadable);
  scan.holders.reserve(fds.holders.size());
  for (gd::DeviceHolder& h : fds.holders)
    scan.holders.push_back({h.pid, std::move(h.devices)});
  return scan;
}

}  // namespace gd::procmgmt
