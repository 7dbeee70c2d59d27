// pcie-acs: PCIe Access Control Services on the switch ports between GPUs.
// With ACS P2P Request/Completion Redirect (or Egress Control) enabled, a
// switch sends GPU-to-GPU traffic up to the root complex instead of across
// the switch: P2P bandwidth drops, and NCCL can hang or fall back. NVIDIA's
// advice for bare-metal multi-GPU servers is to disable ACS on those ports
// (it is wanted only for VFIO isolation).
//
// The ports that matter for a pair of GPUs are the bridges from each GPU up
// to (not including) their lowest common ancestor, i.e. the downstream
// ports of the switch they share. GPUs under different root ports share no
// switch: their P2P path is the root complex, where ACS is not the issue.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "checklist/check_util.h"
#include "common/int_list.h"

namespace gd {

using namespace checklist;

namespace {

constexpr uint16_t kAcsCapId = 0x000D;     // PCIe extended capability id
constexpr size_t kExtCapStart = 0x100;     // first extended capability
constexpr size_t kConfigSpaceSize = 4096;  // PCIe config space
constexpr uint16_t kAcsControlOffset = 6;  // ACS Control register
constexpr uint16_t kAcsRequestRedirect = 1 << 2;
constexpr uint16_t kAcsCompletionRedirect = 1 << 3;
constexpr uint16_t kAcsEgressControl = 1 << 5;
// Capabilities form a linked list; a corrupt one must not loop forever.
constexpr int kMaxCaps = 64;

bool is_pci_name(const std::string& s) {
  unsigned d, b, dev, f;
  char tail;
  return std::sscanf(s.c_str(), "%4x:%2x:%2x.%1x%c", &d, &b, &dev, &f, &tail) ==
         4;
}

// Bridges above the GPU, top (root port) first; nullopt when the GPU is not
// in sysfs.
std::optional<std::vector<std::string>> upstream_bridges(
    const std::string& sys_root, const std::string& name) {
  std::error_code ec;
  auto path =
      std::filesystem::canonical(sys_root + "/bus/pci/devices/" + name, ec);
  if (ec) return std::nullopt;
  std::vector<std::string> chain;
  for (const auto& part : path) {
    std::string s = part.string();
    if (is_pci_name(s)) chain.push_back(s);
  }
  if (chain.empty() || chain.back() != name) return std::nullopt;
  chain.pop_back();
  return chain;
}

enum class Acs { kOff, kRedirect, kNoCapability, kNeedsRoot, kUnreadable };

Acs read_acs(const std::string& sys_root, const std::string& bridge,
             uint16_t& ctrl) {
  std::ifstream in(sys_root + "/bus/pci/devices/" + bridge + "/config",
                   std::ios::binary);
  if (!in) return Acs::kUnreadable;
  std::vector<unsigned char> cfg(kConfigSpaceSize);
  in.read(reinterpret_cast<char*>(cfg.data()), cfg.size());
  size_t n = static_cast<size_t>(in.gcount());
  // Without CAP_SYS_ADMIN the kernel returns only the first 64 bytes (the
  // standard header); the extended capabilities start at 0x100.
  if (n <= kExtCapStart) return Acs::kNeedsRoot;
  auto u32 = [&](size_t off) {
    return static_cast<uint32_t>(cfg[off]) |
           static_cast<uint32_t>(cfg[off + 1]) << 8 |
           static_cast<uint32_t>(cfg[off + 2]) << 16 |
           static_cast<uint32_t>(cfg[off + 3]) << 24;
  };
  size_t off = kExtCapStart;
  for (int i = 0; i < kMaxCaps && off >= kExtCapStart && off + 8 <= n; ++i) {
    uint32_t hdr = u32(off);
    if (hdr == 0 || hdr == 0xffffffff) break;
    if ((hdr & 0xffff) == kAcsCapId) {
      ctrl = static_cast<uint16_t>(cfg[off + kAcsControlOffset] |
                                   cfg[off + kAcsControlOffset + 1] << 8);
      return ctrl & (kAcsRequestRedirect | kAcsCompletionRedirect |
                     kAcsEgressControl)
                 ? Acs::kRedirect
                 : Acs::kOff;
    }
    off = (hdr >> 20) & 0xffc;
    if (off == 0) break;
  }
  return Acs::kNoCapability;
}

}  // namespace

std::vector<CheckItem> check_pcie_acs(const CheckContext& ctx) {
  constexpr const char* kId = "pcie-acs";
  if (auto skip = skip_without_nvml(ctx.header, kId)) return {*skip};
  if (ctx.header.gpus.size() < 2)
    return {make_item(kId, CheckStatus::kSkip, "-",
                      "fewer than two GPUs: no peer-to-peer path")};
  struct Gpu {
    int index;
    std::vector<std::string> chain;
  };
  std::vector<Gpu> gpus;
  for (const auto& g : ctx.header.gpus) {
    std::string name = sysfs_pci_name(g.pci_bus_id);
    auto chain =
        name.empty() ? std::nullopt : upstream_bridges(ctx.sys_root, name);
    if (!chain)
      return {
          make_item(kId, CheckStatus::kSkip, "-",
                    fmt::format("GPU {} ({}) is not in /sys/bus/pci/devices",
                                g.index, g.pci_bus_id))};
    gpus.push_back({g.index, *chain});
  }
  // bridge -> the GPUs whose P2P path crosses it
  std::map<std::string, std::set<int>> between;
  for (size_t i = 0; i < gpus.size(); ++i)
    for (size_t j = i + 1; j < gpus.size(); ++j) {
      const auto& a = gpus[i].chain;
      const auto& b = gpus[j].chain;
      size_t common = 0;
      while (common < a.size() && common < b.size() && a[common] == b[common])
        ++common;
      if (common == 0) continue;  // no shared switch: via the root complex
      for (size_t k = common; k < a.size(); ++k)
        between[a[k]].insert(gpus[i].index);
      for (size_t k = common; k < b.size(); ++k)
        between[b[k]].insert(gpus[j].index);
    }
  if (between.empty())
    return {make_item(kId, CheckStatus::kPass, "no PCIe switch shared by GPUs",
                      "peer-to-peer traffic goes through the root complex")};

  std::vector<std::string> redirect, needs_root, off;
  std::set<int> affected;
  for (const auto& [bridge, idx] : between) {
    uint16_t ctrl = 0;
    switch (read_acs(ctx.sys_root, bridge, ctrl)) {
      case Acs::kRedirect:
        redirect.push_back(fmt::format("{} (ctrl {:#06x})", bridge, ctrl));
        affected.insert(idx.begin(), idx.end());
        break;
      case Acs::kNeedsRoot:
      case Acs::kUnreadable:
        needs_root.push_back(bridge);
        break;
      case Acs::kOff:
      case Acs::kNoCapability:
        off.push_back(bridge);
        break;
    }
  }
  if (!redirect.empty())
    return {make_item(
        kId, CheckStatus::kWarn,
        fmt::format("ACS redirect on {} (GPU {})", fmt::join(redirect, ", "),
                    join_ints({affected.begin(), affected.end()}, ",")),
        "GPU peer-to-peer traffic is sent up to the root complex: disable ACS "
        "in the BIOS, or at boot `setpci -s BDF ECAP_ACS+0x6.w=0000` on these "
        "ports (bare metal without VFIO)")};
  if (!needs_root.empty())
    return {
        make_item(kId, CheckStatus::kSkip,
                  fmt::format("{} switch port{} between GPUs", between.size(),
                              between.size() == 1 ? "" : "s"),
                  "needs root (PCI config space past 64 bytes is root-only)")};
  return {make_item(kId, CheckStatus::kPass,
                    fmt::format("off on {} switch port{} between GPUs",
                                off.size(), off.size() == 1 ? "" : "s"))};
}

}  // namespace gd
