#include "views/top/rows.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <unordered_map>

#include "common/ascii_text.h"
#include "common/container_ref.h"
#include "model/memory_owners.h"
#include "model/pod_label.h"
#include "model/process_tree.h"
#include "views/ps_view.h"

namespace gd::top {
namespace {

bool matches_text(const ProcRow& r, const std::string& text) {
  return icontains(row_command(r), text) || icontains(row_user(r), text) ||
         icontains(std::to_string(r.key.pid), text);
}

// A value to sort by: a number or a text; unknown sorts last either way.
struct SortValue {
  bool known = false;
  double number = 0;
  std::string text;
};

SortValue sort_value(const ProcRow& r, Column c, double now) {
  auto num = [](std::optional<double> v) {
    return v ? SortValue{true, *v, {}} : SortValue{};
  };
  auto txt = [](std::string v) { return SortValue{true, 0, std::move(v)}; };
  switch (c) {
    case Column::kGpu:
      return SortValue{true, static_cast<double>(r.key.gpu), {}};
    case Column::kPid:
      return SortValue{true, static_cast<double>(r.key.pid), {}};
    case Column::kUser:
      return r.proc ? txt(r.proc->user) : SortValue{};
    case Column::kGpuMem:
      return r.gpu_mem ? SortValue{true, static_cast<double>(*r.gpu_mem), {}}
                       : SortValue{};
    case Column::kSm:
      return num(r.sm_pct);
    case Column::kCpu:
      return num(r.cpu_pct);
    case Column::kRss:
      return r.proc && r.proc->rss_bytes
                 ? SortValue{true, static_cast<double>(*r.proc->rss_bytes), {}}
                 : SortValue{};
    case Column::kState:
      return txt(row_state(r));
    case Column::kTime:
      return num(row_elapsed(r, now));
    case Column::kContainer: {
      std::string c = row_container(r);
      return c.empty() ? SortValue{} : txt(std::move(c));
    }
    case Column::kCommand:
      return txt(row_command(r));
  }
  return {};
}

// One GPU process and the workers under it.
struct Group {
  ProcRow head;
  std::vector<ProcRow> workers;
};

}  // namespace

std::string row_container_only(const ProcRow& r);

std::string row_user(const ProcRow& r) { return r.proc ? r.proc->user : "?"; }

std::string row_command(const ProcRow& r) {
  if (!r.proc) return "";
  return r.proc->cmdline.empty() ? "[" + r.proc->name + "]" : r.proc->cmdline;
}

std::string row_container(const ProcRow& r) {
  // A pod the runtime named reads as the operator knows it.
  if (r.proc && r.proc->pod && r.proc->pod->name) return pod_label(r.proc->pod);
  std::string text = row_container_only(r);
  // A process outside containers shows its Slurm job (its id: the name is
  // in the process's details).
  if (text.empty() && r.proc && r.proc->slurm_job_id)
    return "slurm " + *r.proc->slurm_job_id;
  return text;
}

std::string row_container_only(const ProcRow& r) {
  if (!r.proc || !r.proc->cgroup) return "";
  // Every frame asks again for the same few cgroups; the parse (a regular
  // expression) is remembered per path, in a bounded table.
  thread_local std::unordered_map<std::string, std::string> known;
  auto it = known.find(*r.proc->cgroup);
  if (it != known.end()) return it->second;
  if (known.size() >= 4096) known.clear();
  std::string text = container_from_cgroup(r.proc->cgroup).short_text();
  known.emplace(*r.proc->cgroup, text);
  return text;
}

std::string row_state(const ProcRow& r) {
  if (r.missing) return "gone";
  return r.proc ? r.proc->state : "?";
}

std::optional<double> row_elapsed(const ProcRow& r, double now) {
  if (!r.proc || !r.proc->start_time) return std::nullopt;
  return std::max(0.0, now - *r.proc->start_time);
}

std::vector<ProcRow> build_rows(const Sample& s, const TopState& st,
                                const ProcessTree* tree) {
  std::vector<Group> groups;
  for (const PsRow& pr : tree ? build_ps_rows(*tree) : build_ps_rows(s)) {
    Group g;
    ProcRow& h = g.head;
    h.key = {pr.gpu, pr.gpu_process.pid};
    h.owner = pr.gpu_process.pid;
    h.proc = pr.missing() ? nullptr : pr.proc;
    h.gpu_mem = pr.gpu_process.used_bytes;
    h.sm_pct = pr.gpu_process.sm_util_pct;
    h.missing = pr.missing();
    h.zombie = pr.zombie();
    h.other_ns = h.proc && h.proc->ns_pid && *h.proc->ns_pid != h.key.pid;
    h.cpu_pct = h.proc ? h.proc->cpu_pct : std::nullopt;
    h.workers = pr.children.size();
    for (size_t i = 0; i < pr.children.size(); ++i) {
      const ProcessSample* c = pr.children[i];
      if (c->cpu_pct) h.cpu_pct = h.cpu_pct.value_or(0) + *c->cpu_pct;
      ProcRow w;
      w.key = {-1, c->pid};
      w.owner = h.key.pid;
      w.depth = pr.child_depth[i];
      w.proc = c;
      w.cpu_pct = c->cpu_pct;
      w.zombie = c->state == "Z";
      w.other_ns = c->ns_pid && *c->ns_pid != c->pid;
      g.workers.push_back(w);
    }
    // Tree glyphs: a worker is the last of its siblings when no later
    // worker at its depth follows before a shallower one.
    for (size_t i = 0; i < g.workers.size(); ++i) {
      bool last = true;
      for (size_t j = i + 1; j < g.workers.size(); ++j) {
        if (g.workers[j].depth < g.workers[i].depth) break;
        if (g.workers[j].depth == g.workers[i].depth) {
          last = false;
          break;
        }
      }
      g.workers[i].last_sibling = last;
    }
    // The tree view shows each worker's CPU on its own row.
    if (st.tree) h.cpu_pct = h.proc ? h.proc->cpu_pct : std::nullopt;
    groups.push_back(std::move(g));
  }

  std::erase_if(groups, [&](const Group& g) {
    if (st.gpu_filter && g.head.key.gpu != *st.gpu_filter) return true;
    if (st.user_filter && row_user(g.head) != *st.user_filter) return true;
    if (st.text_filter.empty()) return false;
    if (matches_text(g.head, st.text_filter)) return false;
    return std::none_of(
        g.workers.begin(), g.workers.end(),
        [&](const ProcRow& w) { return matches_text(w, st.text_filter); });
  });

  const double now = s.t;
  const bool desc = column_descending_by_default(st.sort) != st.reverse;
  std::vector<std::pair<SortValue, size_t>> keyed;
  keyed.reserve(groups.size());
  for (size_t i = 0; i < groups.size(); ++i)
    keyed.emplace_back(sort_value(groups[i].head, st.sort, now), i);
  std::stable_sort(
      keyed.begin(), keyed.end(), [&](const auto& a, const auto& b) {
        const SortValue &x = a.first, &y = b.first;
        if (x.known != y.known) return x.known;  // unknown last
        if (x.known) {
          int cmp = x.text != y.text       ? (x.text < y.text ? -1 : 1)
                    : x.number != y.number ? (x.number < y.number ? -1 : 1)
                                           : 0;
          if (cmp != 0) return desc ? cmp > 0 : cmp < 0;
        }
        const ProcRow &ra = groups[a.second].head, &rb = groups[b.second].head;
        if (ra.key.gpu != rb.key.gpu) return ra.key.gpu < rb.key.gpu;
        return ra.key.pid < rb.key.pid;
      });

  std::vector<ProcRow> rows;
  for (const auto& [value, i] : keyed) {
    rows.push_back(groups[i].head);
    if (st.tree)
      rows.insert(rows.end(), groups[i].workers.begin(),
                  groups[i].workers.end());
  }
  return rows;
}

MemorySplit memory_split(const TraceHeader& h, const Sample& s, int gpu,
                         const ProcessTree* tree) {
  MemorySplit m;
  for (const auto& info : h.gpus)
    if (info.index == gpu) m.total = info.memory_total_bytes;
  const GpuSample* g = nullptr;
  for (const auto& x : s.gpus)
    if (x.index == gpu) g = &x;
  if (!g) return m;
  m.used = g->mem_used_bytes;
  // The figure the finding, who and the dashboard give
  // (model/memory_owners.h).
  m.orphaned =
      (tree ? memory_owners(*g, *tree) : memory_owners(*g, ProcessTree(s)))
          .not_owned_bytes.value_or(0);
  return m;
}

std::vector<std::string> users_of(const Sample& s) {
  std::set<std::string> users;
  for (const auto& g : s.gpus)
    if (g.processes)
      for (const auto& gp : *g.processes)
        for (const auto& p : s.processes)
          if (p.pid == gp.pid && p.state != "missing" && !p.user.empty())
            users.insert(p.user);
  return {users.begin(), users.end()};
}

const char* column_title(Column c) {
  switch (c) {
    case Column::kGpu:
      return "GPU";
    case Column::kPid:
      return "PID";
    case Column::kUser:
      return "USER";
    case Column::kGpuMem:
      return "GPU-MEM";
    case Column::kSm:
      return "SM%";
    case Column::kCpu:
      return "CPU%";
    case Column::kRss:
      return "RSS";
    case Column::kState:
      return "S";
    case Column::kTime:
      return "TIME";
    case Column::kContainer:
      return "CONTAINER";
    case Column::kCommand:
      return "COMMAND";
  }
  return "?";
}

bool column_descending_by_default(Column c) {
  switch (c) {
    case Column::kGpuMem:
    case Column::kSm:
    case Column::kCpu:
    case Column::kRss:
    case Column::kTime:
      return true;
    default:
      return false;
  }
}

const char* chart_set_name(ChartSet c) {
  switch (c) {
    case ChartSet::kUtilMem:
      return "util / memory";
    case ChartSet::kTempPower:
      return "temperature / power";
    case ChartSet::kClocks:
      return "SM / memory clock";
    case ChartSet::kPcie:
      return "PCIe tx / rx";
  }
  return "?";
}

}  // namespace gd::top
