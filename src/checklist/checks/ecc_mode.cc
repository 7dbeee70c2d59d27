// ecc-mode: on a data-centre GPU, ECC off means memory corruption goes
// unnoticed (and row remapping / page retirement cannot protect the job).
// GPUs without ECC (most consumer boards) report it unknown: skipped.
#include "checklist/check_util.h"

namespace gd {

using namespace checklist;

std::vector<CheckItem> check_ecc_mode(const CheckContext& ctx) {
  constexpr const char* kId = "ecc-mode";
  if (auto skip = skip_without_nvml(ctx.header, kId)) return {*skip};
  std::vector<GpuResult> results;
  for (const auto& g : ctx.header.gpus) {
    if (!g.ecc_enabled)
      results.push_back({g.index, CheckStatus::kSkip, "n/a",
                         "the GPU has no ECC or does not report it"});
    else if (*g.ecc_enabled)
      results.push_back({g.index, CheckStatus::kPass, "enabled", ""});
    else
      results.push_back(
          {g.index, CheckStatus::kWarn, "disabled",
           "memory errors go undetected: `nvidia-smi -i N -e 1`, then reset "
           "the GPU or reboot"});
  }
  return fold_gpu_results(kId, results);
}

}  // namespace gd
