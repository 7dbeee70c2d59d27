// iommu: with the IOMMU translating DMA (the default for intel_iommu=on /
// amd_iommu without iommu=pt), every GPU transfer goes through IOTLB
// lookups, which costs host<->device bandwidth, and peer-to-peer traffic
// between GPUs is routed through the root complex or fails. Passthrough
// (iommu=pt) keeps the IOMMU for VFIO/device assignment without that cost.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "checklist/check_util.h"

namespace gd {

using namespace checklist;

namespace {

struct Cmdline {
  std::string iommu, intel, amd;  // values of iommu=, intel_iommu=, amd_iommu=
};

Cmdline parse_cmdline(const std::string& text) {
  Cmdline c;
  std::istringstream in(text);
  std::string tok;
  auto take = [&](const char* key, std::string& out) {
    std::string k = key;
    if (tok.rfind(k, 0) == 0) out = tok.substr(k.size());
  };
  while (in >> tok) {
    take("iommu=", c.iommu);
    take("intel_iommu=", c.intel);
    take("amd_iommu=", c.amd);
  }
  return c;
}

bool has(const std::string& list, const char* word) {
  std::istringstream in(list);
  std::string part;
  while (std::getline(in, part, ','))
    if (part == word) return true;
  return false;
}

}  // namespace

std::vector<CheckItem> check_iommu(const CheckContext& ctx) {
  constexpr const char* kId = "iommu";
  namespace fs = std::filesystem;
  std::vector<std::string> units;
  std::error_code ec;
  for (fs::directory_iterator it(ctx.sys_root + "/class/iommu", ec), end;
       !ec && it != end; it.increment(ec))
    units.push_back(it->path().filename().string());
  std::sort(units.begin(), units.end());
  auto cmd_text = read_text(ctx.proc_root + "/cmdline");
  Cmdline cmd = parse_cmdline(cmd_text.value_or(""));
  std::string args;
  for (auto [k, v] :
       {std::pair{"iommu", &cmd.iommu}, std::pair{"intel_iommu", &cmd.intel},
        std::pair{"amd_iommu", &cmd.amd}})
    if (!v->empty()) args += fmt::format(" {}={}", k, *v);
  std::string cmd_note = args.empty() ? "no iommu options on the kernel "
                                        "command line"
                                      : "cmdline:" + args;

  if (units.empty()) {
    if (!fs::exists(ctx.sys_root + "/class"))
      return {make_item(kId, CheckStatus::kSkip, "-",
                        "/sys/class is not readable")};
    return {
        make_item(kId, CheckStatus::kPass, "off (no IOMMU units)", cmd_note)};
  }
  std::string unit_text = fmt::format("{} unit{} ({}{})", units.size(),
                                      units.size() == 1 ? "" : "s", units[0],
                                      units.size() > 1 ? ", ..." : "");
  bool passthrough = cmd.iommu == "pt" || has(cmd.iommu, "pt") ||
                     has(cmd.intel, "pt");  // older kernels: intel_iommu=...,pt
  if (cmd.iommu == "off" || cmd.intel == "off" || cmd.amd == "off")
    return {make_item(kId, CheckStatus::kPass, "off", cmd_note)};
  // The domain type of a GPU's IOMMU group is what the kernel actually does
  // ("identity" = passthrough, "DMA"/"DMA-FQ" = translated), whatever the
  // command line or the kernel's built-in default says.
  std::string group_type, group_gpu;
  for (const auto& g : ctx.header.gpus) {
    std::string name = sysfs_pci_name(g.pci_bus_id);
    if (name.empty()) continue;
    if (auto t = read_line(ctx.sys_root + "/bus/pci/devices/" + name +
                           "/iommu_group/type")) {
      group_type = *t;
      group_gpu = std::to_string(g.index);
      break;
    }
  }
  if (!group_type.empty()) {
    cmd_note = fmt::format("GPU {} IOMMU group type {}; {}", group_gpu,
                           group_type, cmd_note);
    passthrough = group_type == "identity";
  }
  if (passthrough)
    return {make_item(kId, CheckStatus::kPass, "on, passthrough: " + unit_text,
                      cmd_note)};
  return {make_item(
      kId, CheckStatus::kWarn,
      "on, translating DMA: " + unit_text + ", " + cmd_note,
      "add iommu=pt to the kernel command line (keeps VFIO working, removes "
      "the DMA translation cost and P2P detour), unless you need DMA "
      "isolation")};
}

}  // namespace gd
