// memory-degrading on one sample: a memory bank has no spare row left
// (the remap availability histogram's `none` above zero). The next error in
// that bank cannot be remapped. A bank at `low` still has spares: diagnose
// reports those; a gate does not stop a job for them.
#include <fmt/format.h>

#include "check/judges/judge_util.h"

namespace gd::check {

void judge_banks_without_spares(const Input& in, std::vector<CheckFinding>& out,
                                std::vector<NotJudged>&) {
  for (const auto& g : in.sample->gpus) {
    if (g.lost || g.stale || !g.row_remap_histogram) continue;
    const RowRemapHistogram& h = *g.row_remap_histogram;
    if (h.none == 0) continue;
    out.push_back(gpu_finding(
        in, g.index, "memory-degrading", "critical",
        "has memory banks without spare rows",
        fmt::format("bank remap availability: max {}, high {}, partial {}, "
                    "low {}, none {}",
                    h.max, h.high, h.partial, h.low, h.none),
        "Drain the GPU and plan its replacement (RMA: a bank without spare "
        "rows qualifies); attach nvidia-smi -q -d ROW_REMAPPER and an "
        "nvidia-bug-report.sh log.",
        fmt::format("{} memory bank{} without spare rows", h.none,
                    h.none == 1 ? "" : "s")));
  }
}

}  // namespace gd::check
