// What `gpudoctor burn` prints: the line that starts it, a live line per GPU
// while it runs, the report (verdict per GPU with its reasons, then the
// diagnosis findings of the burn window), and the --json document.
#pragma once

#include <string>

#include "burn/burn.h"

namespace gd {

std::string format_burn_start(const burn::BurnStart& start,
                              const burn::BurnOptions& options);
// One line per GPU: phase, progress, figures, temperature, power, clocks,
// clock events, errors.
std::string format_burn_tick(const burn::BurnTick& tick);
std::string format_burn_report(const burn::BurnReport& report);
// {"gpus": [{"gpu", "verdict", "reasons", "gflops_fp32", "gflops_fp64",
// "compute_errors", "memory_errors", "h2d_bytes_per_s", "d2h_bytes_per_s",
// "peak_temp_c", "throttled_pct", ...}], "findings": [...], ...}
std::string format_burn_json(const burn::BurnReport& report);

}  // namespace gd
