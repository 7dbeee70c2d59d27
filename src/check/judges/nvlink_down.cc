// nvlink-degraded on one sample: a GPU that has NVLinks has one down while
// links are up on it or on another GPU of the host. Where every link of
// the host is down there is no fabric at all (a PCIe-only setup, or the
// fabric not trained yet: fabric-manager-down says which), not a broken
// link. diagnose waits 10 samples for a link to stay down; a GPU handed to
// a job is judged as it is now.
#include <fmt/format.h>

#include "check/judges/judge_util.h"
#include "common/int_list.h"

namespace gd::check {

void judge_nvlink_down(const Input& in, std::vector<CheckFinding>& out,
                       std::vector<NotJudged>&) {
  bool any_up = false;
  for (const auto& g : in.sample->gpus)
    if (g.nvlinks)
      for (const auto& l : *g.nvlinks) any_up |= l.active.value_or(false);
  if (!any_up) return;
  for (const auto& g : in.sample->gpus) {
    if (g.lost || g.stale || !g.nvlinks) continue;
    std::vector<int> down;
    for (const auto& l : *g.nvlinks)
      if (l.active && !*l.active) down.push_back(l.link);
    if (down.empty()) continue;
    out.push_back(gpu_finding(
        in, g.index, "nvlink-degraded", "critical",
        fmt::format("has {} NVLink{} down", down.size(),
                    down.size() == 1 ? "" : "s"),
        fmt::format("link{} {} down of {}", down.size() == 1 ? "" : "s",
                    join_ints(down), g.nvlinks->size()),
        fmt::format("Drain the node: collectives over this GPU run slow or "
                    "fail. Check nvidia-smi nvlink -s -i {} and the fabric "
                    "manager's log; reset the GPU or reboot, then reseat or "
                    "replace (RMA) if a link stays down.",
                    g.index),
        fmt::format("NVLink{} {} down", down.size() == 1 ? "" : "s",
                    join_ints(down))));
  }
}

}  // namespace gd::check
