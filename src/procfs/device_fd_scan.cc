#include "procfs/device_fd_scan.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include "procfs/pid_listing.h"
#include "procfs/process_files.h"
#include "procfs/text_util.h"

namespace gd::procfs {
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

namespace {

// "<dev_prefix>/nvidia": what a link to an NVIDIA device file starts with.
std::string nvidia_link_prefix(const std::string& dev_prefix) {
  std::string prefix = dev_prefix;
  while (prefix.size() > 1 && prefix.back() == '/') prefix.pop_back();
  return prefix + "/nvidia";
}

// Adds `pid`'s NVIDIA device files to `scan` (nothing when it has none).
// Each link is read relative to the open fd directory (readlinkat): a full
// path made the kernel walk /proc/PID/fd again for every descriptor, most
// of a link's cost (an init with 300 descriptors is an ancestor of every
// busy process); only a link under the device prefix is looked at further.
void scan_one(const std::string& proc_root, const std::string& link_prefix,
              const std::string& dev_prefix, uint32_t pid, DeviceFdScan& scan) {
  static const pid_t self = getpid();
  if (static_cast<pid_t>(pid) == self) return;
  char target[4096];
  std::string fd_dir = proc_root + "/" + std::to_string(pid) + "/fd";
  DIR* d = opendir(fd_dir.c_str());
  if (!d) {
    if (errno == EACCES || errno == EPERM) scan.unreadable.push_back(pid);
    return;
  }
  const int dir_fd = dirfd(d);
  // Descriptor 0 first: the kernel asks one ptrace check of every link of
  // a process, so a denied one (a container's root without CAP_SYS_PTRACE
  // looking at another's process) skips listing the rest.
  if (readlinkat(dir_fd, "0", target, sizeof target - 1) < 0 &&
      (errno == EACCES || errno == EPERM)) {
    closedir(d);
    return;
  }
  DeviceHolder h;
  h.pid = pid;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    ssize_t n = readlinkat(dir_fd, e->d_name, target, sizeof target - 1);
    if (n < 0 && (errno == EACCES || errno == EPERM)) break;  // as above
    if (n <= 0 || static_cast<size_t>(n) < link_prefix.size() ||
        std::memcmp(target, link_prefix.data(), link_prefix.size()) != 0)
      continue;
    std::string name = nvidia_device_name(
        std::string(target, static_cast<size_t>(n)), dev_prefix);
    if (name.empty() ||
        std::find(h.devices.begin(), h.devices.end(), name) != h.devices.end())
      continue;
    if (h.devices.size() < kMaxDevicesPerHolder)
      h.devices.push_back(std::move(name));
  }
  closedir(d);
  if (h.devices.empty()) return;
  std::sort(h.devices.begin(), h.devices.end());
  scan.holders.push_back(std::move(h));
}

}  // namespace

DeviceFdScan scan_nvidia_device_fds(const std::string& proc_root,
                                    const std::string& dev_prefix) {
  return scan_nvidia_device_fds_of(proc_root, dev_prefix, list_pids(proc_root));
}

DeviceFdScan scan_nvidia_device_fds_of(const std::string& proc_root,
                                       const std::string& dev_prefix,
                                       const std::vector<uint32_t>& pids) {
  std::vector<uint32_t> sorted = pids;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  DeviceFdScan scan;
  const std::string link_prefix = nvidia_link_prefix(dev_prefix);
  for (uint32_t pid : sorted)
    scan_one(proc_root, link_prefix, dev_prefix, pid, scan);
  return scan;
}

bool process_dead(const std::string& proc_root, uint32_t pid) {
  std::string text;
  if (!read_file(proc_root + "/" + std::to_string(pid) + "/stat", text))
    return true;
  auto st = parse_pid_stat(text);
  return !st || st->state == 'Z' || st->state == 'X';
}

}  // namespace gd::procfs
