// mig-mode: MIG mode as it is, and whether a change waits for a GPU reset
// (`nvidia-smi -mig 1` takes effect only after the reset, and until then
// the GPU runs in its old mode: jobs expecting MIG devices find none). A MIG
// GPU without instances offers no compute at all.
#include <fmt/format.h>

#include "checklist/check_util.h"

namespace gd {

using namespace checklist;

std::vector<CheckItem> check_mig_mode(const CheckContext& ctx) {
  constexpr const char* kId = "mig-mode";
  if (auto skip = skip_without_nvml(ctx.header, kId)) return {*skip};
  std::vector<GpuResult> results;
  for (const auto& info : ctx.header.gpus) {
    if (!info.mig_enabled) {
      results.push_back({info.index, CheckStatus::kSkip, "unknown",
                         "the GPU does not support MIG"});
      continue;
    }
    const bool on = *info.mig_enabled;
    if (info.mig_enabled_pending && *info.mig_enabled_pending != on) {
      results.push_back(
          {info.index, CheckStatus::kWarn,
           fmt::format("{}, {} pending", on ? "on" : "off",
                       *info.mig_enabled_pending ? "on" : "off"),
           fmt::format("the MIG mode change takes effect at the next GPU "
                       "reset: drain the GPU, then `nvidia-smi -r -i {}` (or "
                       "reboot)",
                       info.index)});
      continue;
    }
    if (!on) {
      results.push_back({info.index, CheckStatus::kPass, "off", ""});
      continue;
    }
    const GpuSample* g = answering_gpu_sample(ctx.sample, info.index, results);
    if (!g) continue;
    if (g->mig_instances && g->mig_instances->empty()) {
      results.push_back(
          {info.index, CheckStatus::kWarn, "on, no instances",
           fmt::format("a MIG GPU runs nothing until instances exist: "
                       "`nvidia-smi mig -i {} -cgi <profiles> -C`",
                       info.index)});
      continue;
    }
    std::string profiles;
    if (g->mig_instances)
      for (const auto& m : *g->mig_instances)
        profiles += (profiles.empty() ? "" : " + ") + m.profile;
    results.push_back({info.index, CheckStatus::kPass,
                       profiles.empty() ? "on" : "on: " + profiles, ""});
  }
  return fold_gpu_results(kId, results);
}

}  // namespace gd
