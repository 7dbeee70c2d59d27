// row-remap: how many spare rows the GPU's memory banks have left (NVML's
// bank remap availability histogram, Ampere and later). A bank with none
// left cannot remap its next failing row; partial or low banks are the
// trend to watch before that happens.
#include <fmt/format.h>

#include "checklist/check_util.h"

namespace gd {

using namespace checklist;

std::vector<CheckItem> check_row_remap(const CheckContext& ctx) {
  constexpr const char* kId = "row-remap";
  if (auto skip = skip_without_nvml(ctx.header, kId)) return {*skip};
  constexpr const char* kRma =
      "drain the GPU and have it replaced (RMA): collect "
      "`nvidia-smi -q -d ROW_REMAPPER` and `nvidia-bug-report.sh`";
  std::vector<GpuResult> results;
  for (const auto& info : ctx.header.gpus) {
    const GpuSample* g = answering_gpu_sample(ctx.sample, info.index, results);
    if (!g) continue;
    const auto& h = g->row_remap_histogram;
    if (g->remapped_rows_failure.value_or(false)) {
      results.push_back(
          {info.index, CheckStatus::kFail, "row remapping failed", kRma});
    } else if (!h) {
      results.push_back({info.index, CheckStatus::kSkip, "unknown",
                         "the GPU does not report its row remapper"});
    } else if (h->none > 0) {
      results.push_back({info.index, CheckStatus::kFail,
                         fmt::format("{} bank(s) without spare rows", h->none),
                         kRma});
    } else if (h->low > 0 || h->partial > 0) {
      results.push_back(
          {info.index, CheckStatus::kWarn,
           fmt::format("banks with few spare rows: {} low, {} partial", h->low,
                       h->partial),
           "the memory is wearing out: watch the remapped-row counts "
           "(`nvidia-smi -q -d ROW_REMAPPER`) and plan a replacement"});
    } else {
      results.push_back(
          {info.index, CheckStatus::kPass, "spare rows in every bank", ""});
    }
  }
  return fold_gpu_results(kId, results);
}

}  // namespace gd
