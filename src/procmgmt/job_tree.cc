#include "procmgmt/job_tree.h"

#include <algorithm>
#include <map>

#include "procmgmt/kill_plan.h"

namespace gd::procmgmt {

namespace {

std::optional<ProcEntry> launcher_of(uint32_t pid, const ProcSnapshot& procs) {
  for (uint32_t a : procs.ancestors(pid)) {
    const ProcEntry* p = procs.find(a);
    if (!p || a <= 1) break;
    if (is_launcher(*p)) return *p;
  }
  return std::nullopt;
}

}  // namespace

std::vector<JobTree> build_job_trees(const Sample& s,
                                     const std::vector<TreeRank>& ranks,
                                     const ProcSnapshot& procs) {
  std::map<uint32_t, const ProcessSample*> by_pid;
  std::multimap<uint32_t, const ProcessSample*> by_parent;
  for (const auto& p : s.processes) {
    by_pid[p.pid] = &p;
    if (p.ppid && *p.ppid != p.pid) by_parent.emplace(*p.ppid, &p);
  }
  auto is_rank = [&](uint32_t pid) {
    return std::any_of(ranks.begin(), ranks.end(),
                       [&](const TreeRank& r) { return r.pid == pid; });
  };
  // A rank under another listed rank is that rank's worker.
  auto under_other_rank = [&](uint32_t pid) {
    auto it = by_pid.find(pid);
    const ProcessSample* p = it == by_pid.end() ? nullptr : it->second;
    for (int depth = 0; p && p->ppid && depth < kMaxTreeDepth; ++depth) {
      if (is_rank(*p->ppid)) return true;
      auto up = by_pid.find(*p->ppid);
      p = up == by_pid.end() ? nullptr : up->second;
    }
    return false;
  };

  std::vector<JobTree> trees;
  std::map<uint32_t, size_t> tree_of_launcher;
  for (const TreeRank& r : ranks) {
    if (under_other_rank(r.pid)) continue;
    JobTreeRank jr;
    jr.rank = r;
    auto it = by_pid.find(r.pid);
    if (it != by_pid.end() && it->second->state != "missing")
      jr.proc = it->second;
    // Depth-first, lowest pid first.
    std::vector<std::pair<uint32_t, int>> stack{{r.pid, 0}};
    std::vector<uint32_t> seen{r.pid};
    while (!stack.empty()) {
      auto [pid, depth] = stack.back();
      stack.pop_back();
      if (depth > 0) jr.workers.emplace_back(by_pid[pid], depth);
      if (depth >= kMaxTreeDepth) continue;
      std::vector<const ProcessSample*> kids;
      for (auto k = by_parent.equal_range(pid); k.first != k.second; ++k.first)
        kids.push_back(k.first->second);
      std::sort(kids.begin(), kids.end(),
                [](auto* a, auto* b) { return a->pid > b->pid; });
      for (auto* k : kids) {
        if (std::find(seen.begin(), seen.end(), k->pid) != seen.end()) continue;
        seen.push_back(k->pid);
        stack.emplace_back(k->pid, depth + 1);
      }
    }
    auto launcher = jr.proc ? launcher_of(r.pid, procs) : std::nullopt;
    if (launcher) {
      auto [lt, fresh] =
          tree_of_launcher.try_emplace(launcher->pid, trees.size());
      if (fresh) trees.push_back(JobTree{launcher, {}});
      trees[lt->second].ranks.push_back(std::move(jr));
    } else {
      trees.push_back(JobTree{std::nullopt, {}});
      trees.back().ranks.push_back(std::move(jr));
    }
  }
  return trees;
}

}  // namespace gd::procmgmt
