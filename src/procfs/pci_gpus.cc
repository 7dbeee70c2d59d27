#include "procfs/pci_gpus.h"

#include <dirent.h>
#include <limits.h>
#include <unistd.h>

#include <algorithm>

#include "common/ascii_text.h"
#include "procfs/text_util.h"

namespace gd::procfs {

namespace {

// More NVIDIA display functions than any server holds; the rest is ignored.
constexpr size_t kMaxGpus = 1024;

std::string read_link(const std::string& path) {
  char buf[PATH_MAX];
  ssize_t n = ::readlink(path.c_str(), buf, sizeof buf - 1);
  if (n <= 0) return "";
  return std::string(buf, static_cast<size_t>(n));
}

std::string_view basename_of(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// A PCI function name as sysfs spells it: "0000:03:00.0".
bool is_pci_name(std::string_view s) {
  return s.size() >= 12 && s[s.size() - 2] == '.' && s[s.size() - 5] == ':' &&
         s[s.size() - 8] == ':';
}

std::optional<uint64_t> read_hex(const std::string& path, std::string& buf) {
  if (!read_file(path, buf)) return std::nullopt;
  std::string_view v = trim(buf);
  if (v.starts_with("0x")) v.remove_prefix(2);
  uint64_t out = 0;
  if (v.empty() || v.size() > 8) return std::nullopt;
  for (char c : v) {
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (d < 0) return std::nullopt;
    out = out * 16 + static_cast<uint64_t>(d);
  }
  return out;
}

}  // namespace

std::optional<std::vector<PciGpuDevice>> scan_pci_gpus(
    const std::string& sys_root) {
  std::vector<PciGpuDevice> out;
  const std::string dir = sys_root + "/bus/pci/devices";
  DIR* d = ::opendir(dir.c_str());
  if (!d) return std::nullopt;
  std::string buf;
  while (dirent* ent = ::readdir(d)) {
    std::string_view name = ent->d_name;
    if (!is_pci_name(name)) continue;
    const std::string dev = dir + "/" + std::string(name);
    if (read_hex(dev + "/vendor", buf) != 0x10de) continue;
    auto cls = read_hex(dev + "/class", buf);
    if (!cls || (*cls >> 16) != 0x03) continue;
    PciGpuDevice g;
    g.gpu.address = std::string(name);
    if (std::string drv = read_link(dev + "/driver"); !drv.empty())
      g.gpu.driver = std::string(basename_of(drv));
    // The entry links to the device's place in the tree:
    // ../../../devices/pci0000:00/0000:00:03.1/0000:03:00.0; its parent is
    // the bridge above it, or the root bus "pci0000:00".
    std::string where = read_link(dev);
    if (size_t slash = where.rfind('/'); slash != std::string::npos) {
      std::string_view parent =
          basename_of(std::string_view(where).substr(0, slash));
      if (is_pci_name(parent)) g.upstream_port = std::string(parent);
    }
    out.push_back(std::move(g));
    if (out.size() >= kMaxGpus) break;
  }
  ::closedir(d);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.gpu.address < b.gpu.address;
  });
  return out;
}

}  // namespace gd::procfs
