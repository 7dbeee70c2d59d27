// clocks-held-at-idle: an idle GPU whose clocks are held down by a thermal
// or hardware reason (hw_slowdown, hw_thermal_slowdown,
// hw_power_brake_slowdown, sw_thermal_slowdown). At rest none of them has
// cause to be active: the board, the power supply or the cooling forces
// the GPU slow, and a job on it will run slow. A warning: it runs.
#include <fmt/format.h>

#include "check/judges/judge_util.h"

namespace gd::check {

void judge_clocks_held_at_idle(const Input& in, std::vector<CheckFinding>& out,
                               std::vector<NotJudged>&) {
  static const char* const kHolding[] = {"hw_slowdown", "hw_thermal_slowdown",
                                         "hw_power_brake_slowdown",
                                         "sw_thermal_slowdown"};
  for (const auto& g : in.sample->gpus) {
    if (!idle(g) || !g.clock_event_reasons) continue;
    std::string active;
    for (const char* r : kHolding)
      if (has_reason(g, r))
        active += (active.empty() ? "" : ", ") + std::string(r);
    if (active.empty()) continue;
    out.push_back(gpu_finding(
        in, g.index, "clocks-held-at-idle", "warning",
        fmt::format("has its clocks held down while idle ({})", active),
        fmt::format("clock event reasons active at {:.0f}% util: {}",
                    *g.util_pct, active),
        "Check the power supplies and the GPU's power cables (hardware "
        "slowdown, power brake) or its cooling (thermal); nvidia-smi -q -d "
        "PERFORMANCE shows the reasons.",
        fmt::format("clocks held down at idle ({})", active)));
  }
}

}  // namespace gd::check
