// recovery-action: NVML's GPU recovery action (announced by Xid 154). Any
// value but "none" means the GPU must not take new work until the action
// (reset, reboot, drain) is done.
#include <fmt/format.h>

#include "checklist/check_util.h"

namespace gd {

using namespace checklist;

namespace {

std::string what_to_do(const std::string& action) {
  if (action == kRecoveryGpuReset)
    return "drain the GPU, then reset it (`nvidia-smi -r -i N`)";
  if (action == kRecoveryNodeReboot) return "drain the node, then reboot it";
  if (action == kRecoveryDrainP2p)
    return "stop peer-to-peer (NVLink/PCIe P2P) work on this GPU until it is "
           "reset";
  if (action == kRecoveryDrainAndReset)
    return "stop scheduling work on the GPU, let running jobs finish, then "
           "reset it";
  return "see `nvidia-smi -q` and NVIDIA's Xid 154 documentation";
}

}  // namespace

std::vector<CheckItem> check_recovery_action(const CheckContext& ctx) {
  constexpr const char* kId = "recovery-action";
  if (auto skip = skip_without_nvml(ctx.header, kId)) return {*skip};
  std::vector<GpuResult> results;
  for (const auto& info : ctx.header.gpus) {
    const GpuSample* g = answering_gpu_sample(ctx.sample, info.index, results);
    if (!g) continue;
    const std::string& action = g->recovery_action;
    if (action.empty()) {
      results.push_back({info.index, CheckStatus::kSkip, "unknown",
                         "the driver does not report a recovery action"});
    } else if (action == kRecoveryNone) {
      results.push_back({info.index, CheckStatus::kPass, "none", ""});
    } else {
      results.push_back(
          {info.index, CheckStatus::kFail, action, what_to_do(action)});
    }
  }
  return fold_gpu_results(kId, results);
}

}  // namespace gd
