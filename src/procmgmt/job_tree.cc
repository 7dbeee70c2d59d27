#include "procmgmt/job_tree.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "procmgmt/kill_plan.h"
#include "views/text_util.h"

namespace gd::procmgmt {

namespace {

constexpr size_t kCommandWidth = 70;

std::optional<ProcEntry> launcher_of(uint32_t pid, const ProcSnapshot& procs) {
  for (uint32_t a : procs.ancestors(pid)) {
    const ProcEntry* p = procs.find(a);
    if (!p || a <= 1) break;
    if (is_launcher(*p)) return *p;
  }
  return std::nullopt;
}

std::string cpu_text(const ProcessSample* p) {
  return p && p->cpu_pct ? fmt::format("{:.0f}%", *p->cpu_pct) : "n/a";
}

std::string command_of(const ProcessSample* p) {
  if (!p) return "(not in /proc)";
  return p->cmdline.empty() ? "[" + p->name + "]" : p->cmdline;
}

std::string gpus_text(const std::vector<int>& gpus) {
  std::string s;
  for (int g : gpus) s += (s.empty() ? "" : ",") + std::to_string(g);
  return s;
}

nlohmann::json proc_json(const ProcessSample* p) {
  if (!p) return {{"state", "missing"}};
  return {
      {"pid", p->pid},
      {"ppid", p->ppid ? nlohmann::json(*p->ppid) : nlohmann::json()},
      {"user", p->user},
      {"state", p->state},
      {"cpu_pct", p->cpu_pct ? nlohmann::json(*p->cpu_pct) : nlohmann::json()},
      {"command", command_of(p)}};
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

std::string render_job_trees(const Sample&, const std::vector<JobTree>& trees) {
  std::string out;
  for (const JobTree& t : trees) {
    std::string indent;
    if (t.launcher) {
      out += fmt::format("launcher {}  {}  {}  ({} rank{})\n", t.launcher->pid,
                         shorten(t.launcher->user, 32),
                         shorten(t.launcher->command(), kCommandWidth),
                         t.ranks.size(), t.ranks.size() == 1 ? "" : "s");
      indent = "  ";
    }
    for (size_t i = 0; i < t.ranks.size(); ++i) {
      const JobTreeRank& r = t.ranks[i];
      bool last_rank = i + 1 == t.ranks.size();
      std::string branch = t.launcher ? (last_rank ? "`- " : "|- ") : "";
      std::string mem =
          r.rank.used_bytes ? bytes_text(*r.rank.used_bytes) : "n/a";
      out += fmt::format("{}{}rank {}  GPU {}  {}  cpu {}  {}  {}{}\n", indent,
                         branch, r.rank.pid, gpus_text(r.rank.gpus), mem,
                         cpu_text(r.proc),
                         r.proc ? shorten(r.proc->state, 8) : "missing",
                         shorten(command_of(r.proc), kCommandWidth),
                         r.proc && r.proc->state == "Z" ? "  <-- ZOMBIE" : "");
      std::string rank_cont = t.launcher ? (last_rank ? "   " : "|  ") : "";
      for (const auto& [w, depth] : r.workers) {
        if (!w) continue;
        out += fmt::format(
            "{}{}{}`- worker {}  cpu {}  {}  {}\n", indent, rank_cont,
            std::string(static_cast<size_t>(2 * (depth - 1)), ' '), w->pid,
            cpu_text(w), shorten(w->state, 8),
            shorten(command_of(w), kCommandWidth));
      }
    }
  }
  if (trees.empty()) out += "(no GPU processes)\n";
  return out;
}

std::string job_trees_to_json(const Sample& s,
                              const std::vector<JobTree>& trees) {
  nlohmann::json jobs = nlohmann::json::array();
  for (const JobTree& t : trees) {
    nlohmann::json j;
    j["launcher"] = t.launcher
                        ? nlohmann::json{{"pid", t.launcher->pid},
                                         {"user", t.launcher->user},
                                         {"command", t.launcher->command()}}
                        : nlohmann::json();
    nlohmann::json ranks = nlohmann::json::array();
    for (const JobTreeRank& r : t.ranks) {
      nlohmann::json rj = proc_json(r.proc);
      rj["pid"] = r.rank.pid;
      rj["gpus"] = r.rank.gpus;
      rj["used_bytes"] = r.rank.used_bytes ? nlohmann::json(*r.rank.used_bytes)
                                           : nlohmann::json();
      nlohmann::json workers = nlohmann::json::array();
      for (const auto& [w, depth] : r.workers) {
        if (!w) continue;
        nlohmann::json wj = proc_json(w);
        wj["depth"] = depth;
        workers.push_back(std::move(wj));
      }
      rj["workers"] = std::move(workers);
      ranks.push_back(std::move(rj));
    }
    j["ranks"] = std::move(ranks);
    jobs.push_back(std::move(j));
  }
  return nlohmann::json{{"t", s.t}, {"jobs", std::move(jobs)}}.dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace gd::procmgmt
