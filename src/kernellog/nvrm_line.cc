#include "kernellog/nvrm_line.h"

#include <algorithm>
#include <cctype>

#include "common/ascii_text.h"
#include "kernellog/pci_address.h"

namespace gd::kernellog {

namespace {

bool has(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

// A GSP (GPU System Processor firmware) failure: the RPC timeout banners
// (_kgspLogRpcTimeout, _kgspLogXid119), a boot that cannot proceed, a
// firmware image that is missing. The RPC history tables printed after a
// timeout name GSP functions (GSP_RM_CONTROL) but no failure.
bool is_gsp_error(std::string_view s) {
  if (has(s, "_kgspLogXid119") || has(s, "_kgspLogRpcTimeout")) return true;
  if (!icontains(s, "gsp")) return false;
  for (std::string_view word : {"timeout", "fail", "cannot", "no firmware"})
    if (icontains(s, word)) return true;
  return false;
}

}  // namespace

std::optional<NvrmLine> parse_nvrm(std::string_view msg) {
  if (!msg.starts_with("NVRM:")) return std::nullopt;
  std::string_view s = msg.substr(5);
  NvrmLine n;
  if (auto pci = find_pci_address(s)) n.pci = *pci;
  if (has(s, "API mismatch")) {
    n.kind = NvrmKind::kApiMismatch;
    n.continues = !has(s, "same version");
  } else if (has(s, "RmInitAdapter failed")) {
    n.kind = NvrmKind::kRmInitAdapterFailed;
  } else if (has(s, "rm_init_adapter failed") || has(s, "RmInitAdapter:")) {
    n.kind = NvrmKind::kCompanion;
  } else if (has(s, "fallen off the bus")) {
    n.kind = NvrmKind::kFellOffBus;
  } else if (is_gsp_error(s)) {
    n.kind = NvrmKind::kGsp;
  } else if (constexpr std::string_view kHead = " The NVIDIA GPU ";
             s.starts_with(kHead) && !n.pci.empty() &&
             s.find(' ', kHead.size()) == std::string_view::npos) {
    n.kind = NvrmKind::kGpuHeadline;
    n.continues = true;
  }
  return n;
}

}  // namespace gd::kernellog
