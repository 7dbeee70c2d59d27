// ecc-pending: memory pages retired (pre-Ampere) or rows remapped (Ampere
// and later) take effect only after a GPU reset; until then the faulty
// memory is still in use. A failed row remap means no spare rows are left.
#include <fmt/format.h>

#include "checklist/check_util.h"

namespace gd {

using namespace checklist;

std::vector<CheckItem> check_ecc_pending(const CheckContext& ctx) {
  constexpr const char* kId = "ecc-pending";
  if (auto skip = skip_without_nvml(ctx.header, kId)) return {*skip};
  std::vector<GpuResult> results;
  for (const auto& info : ctx.header.gpus) {
    const GpuSample* g = answering_gpu_sample(ctx.sample, info.index, results);
    if (!g) continue;
    if (g->remapped_rows_failure.value_or(false)) {
      results.push_back(
          {info.index, CheckStatus::kFail, "row remapping failed",
           "the GPU has no spare memory rows left: drain it and have it "
           "replaced (RMA)"});
    } else if (g->remapped_rows_pending.value_or(false) ||
               g->retired_pages_pending.value_or(false)) {
      std::string what = g->remapped_rows_pending.value_or(false)
                             ? "row remap pending"
                             : "page retirement pending";
      results.push_back(
          {info.index, CheckStatus::kWarn, what,
           "takes effect only after a GPU reset: drain the GPU, then "
           "`nvidia-smi -r -i N` (or reboot)"});
    } else if (!g->remapped_rows_pending && !g->retired_pages_pending) {
      results.push_back({info.index, CheckStatus::kSkip, "unknown",
                         "the GPU does not report page retirement or row "
                         "remapping"});
    } else {
      results.push_back({info.index, CheckStatus::kPass, "none pending", ""});
    }
  }
  return fold_gpu_results(kId, results);
}

}  // namespace gd
