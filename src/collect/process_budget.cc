#include "collect/process_budget.h"

#include <algorithm>
#include <unordered_set>

#include "common/text_cap.h"
#include "model/process_tree.h"

namespace gd {

size_t apply_process_budget(Sample& s, const ProcessBudget& budget) {
  size_t left_out = 0;
  if (s.processes.size() > budget.max_processes) {
    std::unordered_set<uint32_t> on_gpu;
    for (const auto& g : s.gpus)
      if (g.processes)
        for (const auto& gp : *g.processes) on_gpu.insert(gp.pid);
    // Then their ancestors (a few per job: the launcher or shell that tells
    // which GPU processes form one job), then the rest (workers).
    std::unordered_set<uint32_t> ancestors;
    {
      ProcessTree tree(s);
      for (uint32_t pid : on_gpu)
        for (uint32_t a : tree.links().ancestors(pid)) ancestors.insert(a);
    }
    auto rank = [&](const ProcessSample& p) {
      return on_gpu.count(p.pid) ? 0 : ancestors.count(p.pid) ? 1 : 2;
    };
    // Keeping the sample's order within each group.
    std::stable_sort(s.processes.begin(), s.processes.end(),
                     [&](const ProcessSample& a, const ProcessSample& b) {
                       return rank(a) < rank(b);
                     });
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
