// power-limit: a power limit below the board's default caps clocks under
// load (often left over from a test or set by a management tool).
#include <fmt/format.h>

#include "checklist/check_util.h"

namespace gd {

using namespace checklist;

std::vector<CheckItem> check_power_limit(const CheckContext& ctx) {
  constexpr const char* kId = "power-limit";
  // Limits are set in whole watts; below half a watt is rounding.
  constexpr double kToleranceW = 0.5;
  if (auto skip = skip_without_nvml(ctx.header, kId)) return {*skip};
  std::vector<GpuResult> results;
  for (const auto& g : ctx.header.gpus) {
    if (!g.power_limit_w || !g.power_default_limit_w) {
      results.push_back({g.index, CheckStatus::kSkip, "unknown",
                         "the driver does not report the power limits"});
      continue;
    }
    std::string value = fmt::format("{:.0f} W (default {:.0f} W)",
                                    *g.power_limit_w, *g.power_default_limit_w);
    if (*g.power_limit_w < *g.power_default_limit_w - kToleranceW)
      results.push_back(
          {g.index, CheckStatus::kWarn, value,
           fmt::format("clocks are capped below the default: `nvidia-smi -i "
                       "{} -pl {:.0f}` unless the cap is intended",
                       g.index, *g.power_default_limit_w)});
    else
      results.push_back({g.index, CheckStatus::kPass, value, ""});
  }
  return fold_gpu_results(kId, results);
}

}  // namespace gd
