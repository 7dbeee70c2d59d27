#include "procmgmt/device_holders.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>

#include "procmgmt/proc_entry.h"

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
  std::string prefix = dev_prefix;
  while (prefix.size() > 1 && prefix.back() == '/') prefix.pop_back();
  prefix += "/nvidia";
  if (!target.starts_with(prefix)) return {};
  std::string name = target.substr(prefix.size() - 6);  // keep "nvidia"
  // "nvidia0", "nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-modeset",
  // "nvidia-caps/nvidia-cap1"; a longer path below is not a device.
  if (name.find(' ') != std::string::npos) return {};  // "(deleted)" etc.
  return name;
}

DeviceScan scan_device_holders(const std::string& proc_root,
                               const std::string& dev_prefix) {
  DeviceScan scan;
  const pid_t self = getpid();
  char target[4096];
  for (uint32_t pid : list_pids(proc_root)) {
    std::string fd_dir = proc_root + "/" + std::to_string(pid) + "/fd";
    DIR* d = opendir(fd_dir.c_str());
    if (!d) {
      if (errno == EACCES || errno == EPERM) scan.unreadable.push_back(pid);
      continue;
    }
    DeviceHolder h;
    h.pid = pid;
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      std::string link = fd_dir + "/" + e->d_name;
      ssize_t n = readlink(link.c_str(), target, sizeof target - 1);
      if (n <= 0) continue;
      target[n] = '\0';
      std::string name = nvidia_device_name(target, dev_prefix);
      if (!name.empty()) h.devices.push_back(std::move(name));
    }
    closedir(d);
    // Our own scan opens nothing under dev_prefix, but the NVML library we
    // loaded does: gpudoctor is not a holder worth reporting.
    if (h.devices.empty() || static_cast<pid_t>(pid) == self) continue;
    std::sort(h.devices.begin(), h.devices.end());
    h.devices.erase(std::unique(h.devices.begin(), h.devices.end()),
                    h.devices.end());
    scan.holders.push_back(std::move(h));
  }
  return scan;
}

}  // namespace gd::procmgmt
