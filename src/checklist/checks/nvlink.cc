// nvlink: every NVLink a GPU has should be up. A link that is down makes
// NCCL route around it (or fall back to PCIe); on NVSwitch systems it
// usually means the fabric manager did not train it, or hardware trouble.
#include <fmt/format.h>

#include "checklist/check_util.h"
#include "common/int_list.h"

namespace gd {

using namespace checklist;

std::vector<CheckItem> check_nvlink(const CheckContext& ctx) {
  constexpr const char* kId = "nvlink";
  if (auto skip = skip_without_nvml(ctx.header, kId)) return {*skip};
  std::vector<GpuResult> results;
  for (const auto& info : ctx.header.gpus) {
    const GpuSample* g = answering_gpu_sample(ctx.sample, info.index, results);
    if (!g) continue;
    if (!g->nvlinks || g->nvlinks->empty()) {
      results.push_back(
          {info.index, CheckStatus::kSkip, "none", "the GPU has no NVLink"});
      continue;
    }
    std::vector<int> down;
    for (const NvLink& l : *g->nvlinks)
      if (l.active && !*l.active) down.push_back(l.link);
    const size_t n = g->nvlinks->size();
    if (down.empty()) {
      results.push_back({info.index, CheckStatus::kPass,
                         fmt::format("{} of {} links up", n, n), ""});
      continue;
    }
    results.push_back(
        {info.index, CheckStatus::kFail,
         fmt::format("{} of {} links up, down: {}", n - down.size(), n,
                     join_ints(down, ",")),
         fmt::format(
             "a link the GPU has is down: check `nvidia-smi nvlink -s -i {0}`; "
             "on NVSwitch systems check that nvidia-fabricmanager runs and "
             "its log; reset the GPU (or reboot) and run `dcgmi diag -r 3`",
             info.index)});
  }
  return fold_gpu_results(kId, results);
}

}  // namespace gd
