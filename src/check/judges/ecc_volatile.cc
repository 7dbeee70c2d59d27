// ecc-uncorrectable on one sample: the volatile uncorrectable (double-bit)
// ECC count is above zero. It counts since the last driver load or GPU
// reset, so any error there is data lost since then; diagnose's rule
// watches it grow over a window, which one sample cannot show.
#include <fmt/format.h>

#include <algorithm>

#include "check/judges/judge_util.h"

namespace gd::check {

void judge_ecc_volatile(const Input& in, std::vector<CheckFinding>& out,
                        std::vector<NotJudged>&) {
  for (const auto& g : in.sample->gpus) {
    if (g.lost || g.stale) continue;
    uint64_t dbe = g.ecc_dbe_volatile_total.value_or(0);
    uint64_t dram = g.ecc_dram_uncorrectable_volatile_total.value_or(0);
    uint64_t sram = g.ecc_sram_uncorrectable_volatile_total.value_or(0);
    uint64_t worst = std::max({dbe, dram, sram});
    if (worst == 0) continue;
    out.push_back(gpu_finding(
        in, g.index, "ecc-uncorrectable", "critical",
        "has uncorrectable ECC errors since the driver loaded",
        fmt::format("volatile uncorrectable ECC: {} (DRAM {}, SRAM {})", dbe,
                    dram, sram),
        fmt::format("Drain the GPU: data was lost. Reset it (nvidia-smi -r -i "
                    "{}) or reboot to apply a row remap or page retirement; "
                    "if the count comes back, replace it (RMA) with "
                    "nvidia-smi -q -d ECC,ROW_REMAPPER output.",
                    g.index),
        fmt::format("{} uncorrectable ECC errors", worst)));
  }
}

}  // namespace gd::check
