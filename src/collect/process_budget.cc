#include "collect/process_budget.h"

#include <algorithm>
#include <unordered_set>

#include "common/text_cap.h"

namespace gd {

size_t apply_process_budget(Sample& s, const ProcessBudget& budget) {
  size_t left_out = 0;
  if (s.processes.size() > budget.max_processes) {
    std::unordered_set<uint32_t> on_gpu;
    for (const auto& g : s.gpus)
      if (g.processes)
        for (const auto& gp : *g.processes) on_gpu.insert(gp.pid);
    // GPU processes first, keeping the sample's order within each group.
    std::stable_partition(
        s.processes.begin(), s.processes.end(),
        [&](const ProcessSample& p) { return on_gpu.count(p.pid) > 0; });
    left_out = s.processes.size() - budget.max_processes;
    s.processes.resize(budget.max_processes);
  }
  size_t cmdline_bytes = 0;
  for (auto& p : s.processes) {
    if (cmdline_bytes >= budget.max_cmdline_bytes)
      cap_text(p.cmdline, budget.short_cmdline_bytes);
    cmdline_bytes += p.cmdline.size();
  }
  return left_out;
}

}  // namespace gd
