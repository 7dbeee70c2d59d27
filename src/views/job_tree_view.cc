// Text and JSON of `gpudoctor ps --tree` (procmgmt/job_tree.h builds the
// trees).
#include "views/job_tree_view.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "common/bytes_text.h"
#include "common/int_list.h"
#include "common/terminal_text.h"

namespace gd {

using procmgmt::JobTree;
using procmgmt::JobTreeRank;

namespace {

constexpr size_t kJobCommandWidth = 70;

std::string job_cpu_text(const ProcessSample* p) {
  return p && p->cpu_pct ? fmt::format("{:.0f}%", *p->cpu_pct) : "n/a";
}

std::string command_of(const ProcessSample* p) {
  if (!p) return "(not in /proc)";
  return p->cmdline.empty() ? "[" + p->name + "]" : p->cmdline;
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

std::string render_job_trees(const Sample&,
                             const std::vector<procmgmt::JobTree>& trees) {
  std::string out;
  for (const JobTree& t : trees) {
    std::string indent;
    if (t.launcher) {
      out += fmt::format("launcher {}  {}  {}  ({} rank{})\n", t.launcher->pid,
                         terminal_fit(t.launcher->user, 32),
                         terminal_fit(t.launcher->command(), kJobCommandWidth),
                         t.ranks.size(), t.ranks.size() == 1 ? "" : "s");
      indent = "  ";
    }
    for (size_t i = 0; i < t.ranks.size(); ++i) {
      const JobTreeRank& r = t.ranks[i];
      bool last_rank = i + 1 == t.ranks.size();
      std::string branch = t.launcher ? (last_rank ? "`- " : "|- ") : "";
      std::string mem =
          r.rank.used_bytes ? human_bytes_brief(*r.rank.used_bytes) : "n/a";
      out += fmt::format("{}{}rank {}  GPU {}  {}  cpu {}  {}  {}{}\n", indent,
                         branch, r.rank.pid, join_ints(r.rank.gpus, ","), mem,
                         job_cpu_text(r.proc),
                         r.proc ? terminal_fit(r.proc->state, 8) : "missing",
                         terminal_fit(command_of(r.proc), kJobCommandWidth),
                         r.proc && r.proc->state == "Z" ? "  <-- ZOMBIE" : "");
      std::string rank_cont = t.launcher ? (last_rank ? "   " : "|  ") : "";
      for (const auto& [w, depth] : r.workers) {
        if (!w) continue;
        out += fmt::format(
            "{}{}{}`- worker {}  cpu {}  {}  {}\n", indent, rank_cont,
            std::string(static_cast<size_t>(2 * (depth - 1)), ' '), w->pid,
            job_cpu_text(w), terminal_fit(w->state, 8),
            terminal_fit(command_of(w), kJobCommandWidth));
      }
    }
  }
  if (trees.empty()) out += "(no GPU processes)\n";
  return out;
}

std::string job_trees_to_json(const Sample& s,
                              const std::vector<procmgmt::JobTree>& trees) {
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

}  // namespace gd
