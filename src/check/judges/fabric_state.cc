// fabric-manager-down: a GPU behind NVSwitches (it reports a fabric state)
// whose registration with the fabric is not complete: the fabric manager
// is not running, or failed to add the GPU to its NVLink partition. CUDA
// jobs fail to start on such a GPU. `in_progress` (right after boot, the
// manager still at work) is a warning: it should complete within a minute.
#include <fmt/format.h>

#include "check/judges/judge_util.h"

namespace gd::check {

void judge_fabric_state(const Input& in, std::vector<CheckFinding>& out,
                        std::vector<NotJudged>&) {
  for (const auto& g : in.sample->gpus) {
    const std::string& s = g.fabric_state;
    if (g.lost || g.stale || s.empty() || s == kFabricNotSupported ||
        s == kFabricCompleted)
      continue;
    const bool waiting = s == kFabricInProgress;
    out.push_back(gpu_finding(
        in, g.index, "fabric-manager-down", waiting ? "warning" : "critical",
        fmt::format("is not registered with the NVSwitch fabric ({})", s),
        fmt::format("fabric state {}", s),
        waiting ? "The fabric manager is still registering the GPU: check "
                  "again in a minute; if it stays, see below."
                : "Start or restart the fabric manager (systemctl status "
                  "nvidia-fabricmanager; its version must match the "
                  "driver's) and read its log "
                  "(/var/log/fabricmanager.log); CUDA jobs cannot start on "
                  "this GPU until its state is completed.",
        fmt::format("NVSwitch fabric {}", s)));
  }
}

}  // namespace gd::check
