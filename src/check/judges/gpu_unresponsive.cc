// gpu-unresponsive: NVML's reads of a GPU did not finish within the
// deadline (--deadline, 1 s by default). A GPU whose driver calls hang
// hangs the job's CUDA calls too: unhealthy, never waited for (the reads
// run off the caller's thread, nvml/gpu_source.h).
#include <fmt/format.h>

#include "check/judges/judge_util.h"

namespace gd::check {

void judge_gpu_unresponsive(const Input& in, std::vector<CheckFinding>& out,
                            std::vector<NotJudged>&) {
  for (const auto& g : in.sample->gpus) {
    if (!g.stale) continue;
    std::string within = fmt::format("{:g}s", in.deadline_s);
    out.push_back(gpu_finding(
        in, g.index, "gpu-unresponsive", "critical",
        fmt::format("did not answer within {}", within),
        fmt::format("NVML's reads of GPU {} did not return within {}", g.index,
                    within),
        fmt::format("Drain the node: the driver hangs on this GPU. Save "
                    "the kernel log and nvidia-bug-report.sh output, then "
                    "reset the GPU (nvidia-smi -r -i {}) or reboot.",
                    g.index),
        fmt::format("did not answer within {}", within)));
  }
}

}  // namespace gd::check
