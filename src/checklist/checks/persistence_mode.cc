// persistence-mode: without it the driver tears a GPU down when its last
// client exits and initialises it again (seconds) on the next one, and
// NVML queries from monitoring wake it each time.
#include "checklist/check_util.h"

namespace gd {

using namespace checklist;

std::vector<CheckItem> check_persistence_mode(const CheckContext& ctx) {
  constexpr const char* kId = "persistence-mode";
  if (auto skip = skip_without_nvml(ctx.header, kId)) return {*skip};
  std::vector<GpuResult> results;
  for (const auto& g : ctx.header.gpus) {
    if (!g.persistence_mode)
      results.push_back({g.index, CheckStatus::kSkip, "unknown",
                         "the driver does not report it"});
    else if (*g.persistence_mode)
      results.push_back({g.index, CheckStatus::kPass, "on", ""});
    else
      results.push_back(
          {g.index, CheckStatus::kWarn, "off",
           "enable nvidia-persistenced (or `nvidia-smi -pm 1`) so the GPU "
           "stays initialised between jobs"});
  }
  return fold_gpu_results(kId, results);
}

}  // namespace gd
