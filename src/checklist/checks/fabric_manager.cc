// fabric-manager: on NVSwitch systems (HGX/DGX H100 and newer) each GPU must
// be registered in the NVLink fabric by nvidia-fabricmanager before CUDA can
// use it; NVML reports how far that got. GPUs without a fabric skip.
#include <fmt/format.h>

#include "checklist/check_util.h"

namespace gd {

using namespace checklist;

std::vector<CheckItem> check_fabric_manager(const CheckContext& ctx) {
  constexpr const char* kId = "fabric-manager";
  if (auto skip = skip_without_nvml(ctx.header, kId)) return {*skip};
  std::vector<GpuResult> results;
  for (const auto& info : ctx.header.gpus) {
    const GpuSample* g = answering_gpu_sample(ctx.sample, info.index, results);
    if (!g) continue;
    const std::string& st = g->fabric_state;
    if (st.empty() || st == kFabricNotSupported) {
      results.push_back({info.index, CheckStatus::kSkip,
                         st.empty() ? "unknown" : "not supported",
                         "no NVSwitch fabric reported for this GPU"});
    } else if (st == kFabricCompleted) {
      results.push_back({info.index, CheckStatus::kPass, "registered", ""});
    } else if (st == kFabricInProgress) {
      results.push_back(
          {info.index, CheckStatus::kWarn, "registration in progress",
           "the fabric manager is still setting up the NVLink fabric; CUDA "
           "cannot use the GPU until it completes (check again in a minute)"});
    } else {
      results.push_back(
          {info.index, CheckStatus::kFail,
           st == kFabricNotStarted ? "not started" : "registration failed",
           "CUDA cannot use the GPU until the fabric manager registers it: "
           "`systemctl status nvidia-fabricmanager` (it must match the driver "
           "version) and /var/log/fabricmanager.log"});
    }
  }
  return fold_gpu_results(kId, results);
}

}  // namespace gd
