#include "procfs/device_fd_scan.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>

#include "procfs/text_util.h"

namespace gd::procfs {
namespace {

std::vector<uint32_t> numeric_entries(const std::string& proc_root) {
  std::vector<uint32_t> pids;
  DIR* d = opendir(proc_root.c_str());
  if (!d) return pids;
  while (dirent* e = readdir(d)) {
    const char* n = e->d_name;
    if (n[0] < '1' || n[0] > '9') continue;
    auto v = parse_u64(n);
    if (v && *v <= UINT32_MAX) pids.push_back(static_cast<uint32_t>(*v));
  }
  closedir(d);
  std::sort(pids.begin(), pids.end());
  return pids;
}

}  // namespace

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

DeviceFdScan scan_nvidia_device_fds(const std::string& proc_root,
                                    const std::string& dev_prefix) {
  DeviceFdScan scan;
  const pid_t self = getpid();
  char target[4096];
  for (uint32_t pid : numeric_entries(proc_root)) {
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
    if (h.devices.empty() || static_cast<pid_t>(pid) == self) continue;
    std::sort(h.devices.begin(), h.devices.end());
    h.devices.erase(std::unique(h.devices.begin(), h.devices.end()),
                    h.devices.end());
    scan.holders.push_back(std::move(h));
  }
  return scan;
}

}  // namespace gd::procfs
