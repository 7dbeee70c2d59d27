#include "model/process_budget.h"

#include "common/text_cap.h"
#include "model/process_tree.h"

namespace gd {

std::unordered_set<uint32_t> gpu_process_pids(const Sample& s) {
  std::unordered_set<uint32_t> on_gpu;
  for (const auto& g : s.gpus)
    if (g.processes)
      for (const auto& gp : *g.processes) on_gpu.insert(gp.pid);
  return on_gpu;
}

std::vector<size_t> processes_to_keep(
    const std::vector<std::pair<uint32_t, uint32_t>>& pid_ppid,
    const std::unordered_set<uint32_t>& on_gpu, size_t max_processes) {
  std::vector<size_t> keep;
  if (pid_ppid.size() <= max_processes) {
    keep.resize(pid_ppid.size());
    for (size_t i = 0; i < keep.size(); ++i) keep[i] = i;
    return keep;
  }
  // Then their ancestors (a few per job: the launcher or shell that tells
  // which GPU processes form one job), then the rest (workers).
  std::unordered_set<uint32_t> ancestors;
  {
    PidTree tree(pid_ppid);
    for (uint32_t pid : on_gpu)
      for (uint32_t a : tree.ancestors(pid)) ancestors.insert(a);
  }
  keep.reserve(max_processes);
  for (int rank = 0; rank < 3 && keep.size() < max_processes; ++rank) {
    for (size_t i = 0; i < pid_ppid.size() && keep.size() < max_processes;
         ++i) {
      const uint32_t pid = pid_ppid[i].first;
      const int r = on_gpu.count(pid) ? 0 : ancestors.count(pid) ? 1 : 2;
      if (r == rank) keep.push_back(i);
    }
  }
  return keep;
}

void cap_cmdlines(std::vector<ProcessSample>& processes,
                  const ProcessBudget& budget) {
  size_t cmdline_bytes = 0;
  for (auto& p : processes) {
    if (cmdline_bytes >= budget.max_cmdline_bytes)
      cap_text(p.cmdline, budget.short_cmdline_bytes);
    cmdline_bytes += p.cmdline.size();
  }
}

size_t apply_process_budget(Sample& s, const ProcessBudget& budget) {
  size_t left_out = 0;
  if (s.processes.size() > budget.max_processes) {
    std::vector<std::pair<uint32_t, uint32_t>> pid_ppid;
    pid_ppid.reserve(s.processes.size());
    for (const auto& p : s.processes)
      pid_ppid.emplace_back(p.pid, p.ppid.value_or(0));
    const auto keep =
        processes_to_keep(pid_ppid, gpu_process_pids(s), budget.max_processes);
    std::vector<ProcessSample> kept;
    kept.reserve(keep.size());
    for (size_t i : keep) kept.push_back(std::move(s.processes[i]));
    left_out = s.processes.size() - kept.size();
    s.processes = std::move(kept);
    s.processes_left_out += left_out;
  }
  cap_cmdlines(s.processes, budget);
  return left_out;
}

}  // namespace gd
