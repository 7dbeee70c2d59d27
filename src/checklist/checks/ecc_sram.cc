// ecc-sram: uncorrectable ECC errors in the GPU's SRAM (caches, register
// files) over its lifetime. SRAM has no spare rows to remap: NVIDIA treats
// any uncorrectable SRAM error as a reason to take the GPU out of service,
// and NVML's SRAM error status says when its threshold is exceeded.
#include <fmt/format.h>

#include "checklist/check_util.h"

namespace gd {

using namespace checklist;

std::vector<CheckItem> check_ecc_sram(const CheckContext& ctx) {
  constexpr const char* kId = "ecc-sram";
  if (auto skip = skip_without_nvml(ctx.header, kId)) return {*skip};
  std::vector<GpuResult> results;
  for (const auto& info : ctx.header.gpus) {
    const GpuSample* g = answering_gpu_sample(ctx.sample, info.index, results);
    if (!g) continue;
    const auto& uncorrectable = g->ecc_sram_uncorrectable_aggregate_total;
    const bool exceeded = g->ecc_sram_threshold_exceeded.value_or(false);
    if (!uncorrectable && !g->ecc_sram_threshold_exceeded) {
      results.push_back({info.index, CheckStatus::kSkip, "unknown",
                         "the GPU does not report ECC errors by location"});
    } else if (exceeded || uncorrectable.value_or(0) > 0) {
      std::string value =
          uncorrectable
              ? fmt::format("{} uncorrectable SRAM error(s)", *uncorrectable)
              : std::string("uncorrectable SRAM errors");
      if (exceeded) value += ", threshold exceeded";
      results.push_back({info.index, CheckStatus::kFail, value,
                         "drain the GPU and have it serviced (RMA): collect "
                         "`nvidia-smi -q -d ECC` and `nvidia-bug-report.sh`"});
    } else {
      results.push_back(
          {info.index, CheckStatus::kPass, "no uncorrectable SRAM errors", ""});
    }
  }
  return fold_gpu_results(kId, results);
}

}  // namespace gd
