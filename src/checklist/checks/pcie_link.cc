// pcie-link: the PCIe link's current generation and width against the
// maximum the GPU and slot support. GPUs down-train the link generation
// when idle to save power and train back up under load, so a low generation
// on an idle GPU is normal and passes (with a note). It warns when the link
// is below its maximum while data moves over it, or when the width is low:
// lanes are not dropped for power saving, so x8 on an x16 GPU means a bad
// slot, riser or seating.
#include <fmt/format.h>

#include "checklist/check_util.h"

namespace gd {

using namespace checklist;

namespace {

// 100 MB/s of tx+rx is real data movement; monitoring chatter on an idle GPU
// is orders of magnitude less. (Same threshold as pcie-link-degraded.)
constexpr uint64_t kLoadBytesPerS = 100'000'000;
// Where throughput is unknown, a GPU this busy is taken as using its link.
constexpr double kLoadUtilPct = 50;

std::string link_text(opt<int> gen, opt<int> width) {
  return fmt::format("Gen{} x{}", gen ? std::to_string(*gen) : "?",
                     width ? std::to_string(*width) : "?");
}

}  // namespace

std::vector<CheckItem> check_pcie_link(const CheckContext& ctx) {
  constexpr const char* kId = "pcie-link";
  if (auto skip = skip_without_nvml(ctx.header, kId)) return {*skip};
  std::vector<GpuResult> results;
  for (const auto& info : ctx.header.gpus) {
    const GpuSample* g = answering_gpu_sample(ctx.sample, info.index, results);
    if (!g) continue;
    if (!g->pcie_gen || !g->pcie_width ||
        (!info.pcie_max_gen && !info.pcie_max_width)) {
      results.push_back({info.index, CheckStatus::kSkip, "unknown",
                         "the driver does not report the link (virtual GPU?)"});
      continue;
    }
    std::string value =
        fmt::format("{} (max {})", link_text(g->pcie_gen, g->pcie_width),
                    link_text(info.pcie_max_gen, info.pcie_max_width));
    bool gen_low = info.pcie_max_gen && *g->pcie_gen < *info.pcie_max_gen;
    bool width_low =
        info.pcie_max_width && *g->pcie_width < *info.pcie_max_width;
    bool loaded;
    if (g->pcie_tx_bytes_per_s && g->pcie_rx_bytes_per_s)
      loaded =
          *g->pcie_tx_bytes_per_s + *g->pcie_rx_bytes_per_s >= kLoadBytesPerS;
    else
      loaded = g->util_pct && *g->util_pct >= kLoadUtilPct;
    if (width_low) {
      results.push_back(
          {info.index, CheckStatus::kWarn, value,
           "fewer lanes than the GPU supports: reseat the GPU, check the "
           "slot/riser and cabling (lspci -vv: LnkSta vs LnkCap)"});
    } else if (gen_low && loaded) {
      results.push_back(
          {info.index, CheckStatus::kWarn, value + ", under load",
           "the link stays below its maximum generation while moving data: "
           "check the BIOS PCIe speed setting, riser and slot"});
    } else if (gen_low) {
      results.push_back({info.index, CheckStatus::kPass, value + ", idle",
                         "a lower generation at idle is normal power saving; "
                         "it trains up under load"});
    } else {
      results.push_back({info.index, CheckStatus::kPass, value, ""});
    }
  }
  return fold_gpu_results(kId, results);
}

}  // namespace gd
