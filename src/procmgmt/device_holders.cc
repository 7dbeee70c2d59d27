#include "procmgmt/device_holders.h"

#include <algorithm>
#include <cctype>

#include "procfs/device_fd_scan.h"
#include "procfs/process_files.h"

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
  for (gd::DeviceHolder& h : fds.holders) {
    DeviceHolder d{h.pid, std::move(h.devices), {}};
    if (std::find(d.devices.begin(), d.devices.end(), "nvidia-uvm") !=
        d.devices.end())
      d.libs = procfs::read_maps_cuda_libs(proc_root, h.pid);
    scan.holders.push_back(std::move(d));
  }
  return scan;
}

}  // namespace gd::procmgmt
