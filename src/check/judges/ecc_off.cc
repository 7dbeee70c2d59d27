// ecc-off: ECC is disabled on a GPU that has it. Memory errors then corrupt
// results silently instead of being corrected or reported. A warning: a
// site may turn ECC off on purpose (for memory size or bandwidth).
#include <fmt/format.h>

#include "check/judges/judge_util.h"

namespace gd::check {

void judge_ecc_off(const Input& in, std::vector<CheckFinding>& out,
                   std::vector<NotJudged>&) {
  for (const auto& info : in.header->gpus) {
    if (!info.ecc_enabled || *info.ecc_enabled) continue;
    out.push_back(gpu_finding(
        in, info.index, "ecc-off", "warning", "has ECC turned off",
        "ECC mode disabled (NVML's current ECC mode)",
        fmt::format("Turn it on unless the site chose otherwise: nvidia-smi "
                    "-e 1 -i {}, then reset the GPU or reboot.",
                    info.index),
        "ECC off"));
  }
}

}  // namespace gd::check
