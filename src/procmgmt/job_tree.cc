#include "procmgmt/job_tree.h"

#include <algorithm>
#include <map>

#include "model/process_tree.h"
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
  ProcessTree tree(s);
  auto is_rank = [&](uint32_t pid) {
    return std::any_of(ranks.begin(), ranks.end(),
                       [&](const TreeRank& r) { return r.pid == pid; });
  };
  // A rank under another listed rank is that rank's worker.
  auto under_other_rank = [&](uint32_t pid) {
    auto up = tree.links().ancestors(pid);
    return std::any_of(up.begin(), up.end(), is_rank);
  };

  std::vector<JobTree> trees;
  std::map<uint32_t, size_t> tree_of_launcher;
  for (const TreeRank& r : ranks) {
    if (under_other_rank(r.pid)) continue;
    JobTreeRank jr;
    jr.rank = r;
    const ProcessSample* self = tree.find(r.pid);
    if (self && self->state != "missing") jr.proc = self;
    // Depth-first, lowest pid first.
    for (const PidTree::Descendant& d : tree.links().walk_descendants(r.pid))
      jr.workers.emplace_back(tree.find(d.pid), d.depth);
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
