#include "views/ps_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "common/container_ref.h"
#include "common/cuda_version.h"
#include "common/terminal_text.h"
#include "model/pod_label.h"
#include "model/process_tree.h"
#include "model/slurm_label.h"
#include "views/format.h"
#include "views/pod_json.h"
#include "views/text_table.h"

namespace gd {

bool PsRow::missing() const { return !proc || proc->state == "missing"; }
bool PsRow::zombie() const { return proc && proc->state == "Z"; }

std::vector<PsRow> build_ps_rows(const Sample& s) {
  return build_ps_rows(ProcessTree(s));
}

std::vector<PsRow> build_ps_rows(const ProcessTree& tree) {
  const Sample& s = tree.sample();
  std::vector<PsRow> rows;
  for (const auto& g : s.gpus) {
    if (!g.processes) continue;
    for (const auto& gp : *g.processes) {
      PsRow r;
      r.gpu = g.index;
      r.gpu_process = gp;
      r.proc = tree.find(gp.pid);
      for (const PidTree::Descendant& d :
           tree.links().walk_descendants(gp.pid)) {
        r.children.push_back(tree.find(d.pid));
        r.child_depth.push_back(d.depth);
      }
      rows.push_back(std::move(r));
    }
  }
  std::stable_sort(
      rows.begin(), rows.end(), [](const PsRow& a, const PsRow& b) {
        return a.gpu != b.gpu ? a.gpu < b.gpu
                              : a.gpu_process.pid < b.gpu_process.pid;
      });
  return rows;
}

void filter_ps_rows(std::vector<PsRow>& rows, const PsFilter& f,
                    const GpuSelection& gpus) {
  std::erase_if(rows, [&](const PsRow& r) {
    if (!selects(gpus, r.gpu)) return true;
    if (!f.pod.empty() || !f.namespace_.empty())
      if (!r.proc || !pod_matches(r.proc->pod, f.pod, f.namespace_))
        return true;
    return !f.user.empty() && (!r.proc || r.proc->user != f.user);
  });
}

void sort_ps_rows(std::vector<PsRow>& rows, const std::string& key) {
  // Larger-first keys put unknown values last by mapping them to -1.
  auto by = [&](auto value) {
    std::stable_sort(
        rows.begin(), rows.end(),
        [&](const PsRow& a, const PsRow& b) { return value(a) > value(b); });
  };
  if (key == "mem") {
    by([](const PsRow& r) {
      return r.gpu_process.used_bytes
                 ? static_cast<double>(*r.gpu_process.used_bytes)
                 : -1.0;
    });
  } else if (key == "cpu") {
    by([](const PsRow& r) {
      return r.proc && r.proc->cpu_pct ? *r.proc->cpu_pct : -1.0;
    });
  } else if (key == "elapsed") {
    // Earliest start = longest running.
    by([](const PsRow& r) {
      return r.proc && r.proc->start_time ? -*r.proc->start_time : -1e300;
    });
  } else if (key == "pid") {
    std::stable_sort(rows.begin(), rows.end(),
                     [](const PsRow& a, const PsRow& b) {
                       return a.gpu_process.pid < b.gpu_process.pid;
                     });
  } else if (key == "gpu") {
    std::stable_sort(
        rows.begin(), rows.end(), [](const PsRow& a, const PsRow& b) {
          return a.gpu != b.gpu ? a.gpu < b.gpu
                                : a.gpu_process.pid < b.gpu_process.pid;
        });
  } else {
    throw std::invalid_argument("unknown sort key '" + key +
                                "' (mem, cpu, pid, elapsed, gpu)");
  }
}

namespace {

std::string cpu_text(const ProcessSample* p) {
  return p && p->cpu_pct ? fmt::format("{:.1f}", *p->cpu_pct) : kUnknown;
}

std::string elapsed_text(const Sample& s, const ProcessSample* p) {
  return p && p->start_time ? elapsed_compact(s.t - *p->start_time) : kUnknown;
}

// The GPU process's own columns: memory, NVML's per-process SM and memory
// utilisation, and its MIG instance ("GI/CI"); empty for worker rows.
struct GpuCols {
  std::string mem, sm, mem_util, mig;
};

// The JOB column's width: 0 (no column) when no row has a Slurm job.
constexpr size_t kJobColumnMax = 48;

// A process's Slurm job as a cell ("-": none).
std::string job_text(const Sample& s, const ProcessSample* p) {
  std::string job = p ? slurm_job_label(s, p->slurm_job_id) : "";
  return job.empty() ? "-" : job;
}

std::string job_cell(const Sample& s, const ProcessSample* p, size_t width) {
  if (width == 0) return "";
  return terminal_cell(job_text(s, p), width) + " ";
}

// The POD column's width: 0 (no column) when no row is in a pod.
constexpr size_t kPodColumnMax = 48;

// A process's pod as a cell ("-": none).
std::string pod_text(const ProcessSample* p) {
  std::string pod = p ? pod_label(p->pod) : "";
  return pod.empty() ? "-" : pod;
}

std::string pod_cell(const ProcessSample* p, size_t width) {
  if (width == 0) return "";
  return terminal_cell(pod_text(p), width) + " ";
}

// Which optional columns (JOB, POD) this listing has, and how wide.
struct ExtraWidths {
  size_t job = 0, pod = 0;
};

// The cells of one row, in kPsColumns' order.
std::vector<std::string> cells_for(const Sample& s, const std::string& gpu_col,
                                   const std::string& pid_col, const GpuCols& g,
                                   const ProcessSample* p) {
  std::string container =
      container_from_cgroup(p ? p->cgroup : std::nullopt).short_text();
  std::string cuda = p ? cuda_runtime_version(p->libs) : "";
  return {gpu_col,
          g.mig,
          pid_col,
          p ? p->user : "?",
          g.mem,
          g.sm,
          g.mem_util,
          cpu_text(p),
          p ? p->state : "missing",
          elapsed_text(s, p),
          container.empty() ? "-" : container,
          cuda.empty() ? "-" : cuda,
          job_text(s, p),
          pod_text(p),
          p ? (p->cmdline.empty() ? "[" + p->name + "]" : p->cmdline) : ""};
}

// The columns when fitted to a width: caps as the full layout's widths.
const std::vector<TableColumn>& ps_columns() {
  static const std::vector<TableColumn> cols = {{"GPU", 4, false, true},
                                                {"MIG", 5},
                                                {"PID", 16, false, true},
                                                {"USER", 10},
                                                {"GPU-MEM", 10, true, true},
                                                {"SM%", 4, true},
                                                {"MEM%", 4, true},
                                                {"CPU%", 7, true},
                                                {"STATE", 7},
                                                {"ELAPSED", 8, true},
                                                {"CONTAINER", 20},
                                                {"CUDA", 6},
                                                {"JOB", kJobColumnMax},
                                                {"POD", kPodColumnMax},
                                                {"COMMAND", 0, false, true}};
  return cols;
}

std::string line_for(const Sample& s, const std::string& gpu_col,
                     const std::string& pid_col, const GpuCols& g,
                     const ProcessSample* p, const std::string& note,
                     size_t cmd_width, ExtraWidths extra) {
  std::string user = p ? terminal_cell(p->user, 10) : "?";
  std::string state = p ? terminal_cell(p->state, 7) : "missing";
  std::string container =
      container_from_cgroup(p ? p->cgroup : std::nullopt).short_text();
  std::string cuda = p ? cuda_runtime_version(p->libs) : "";
  std::string cmd =
      p ? (p->cmdline.empty() ? "[" + p->name + "]" : p->cmdline) : "";
  return fmt::format(
      "{:<4} {:<5} {:<16} {:<10} {:>10} {:>4} {:>4} {:>7} {:<7} {:>8} {:<20} "
      "{:<6} {}{}{}{}\n",
      gpu_col, g.mig, pid_col, user, g.mem, g.sm, g.mem_util, cpu_text(p),
      state, elapsed_text(s, p), container.empty() ? "-" : container,
      cuda.empty() ? "-" : cuda, job_cell(s, p, extra.job),
      pod_cell(p, extra.pod),
      cmd_width ? terminal_fit(cmd, cmd_width) : terminal_safe(cmd), note);
}

std::string util_text(const std::optional<double>& v) {
  return v ? fmt::format("{:.0f}", *v) : std::string(kUnknown);
}

// "1/0" for a process on GPU instance 1, compute instance 0; "-" off MIG.
std::string mig_text(const GpuProcess& p) {
  if (!p.gi_id) return "-";
  return p.ci_id ? fmt::format("{}/{}", *p.gi_id, *p.ci_id)
                 : fmt::format("{}/?", *p.gi_id);
}

// The MIG profile of the instance a process runs on, from its GPU's sample.
const MigInstance* instance_of(const Sample& s, int gpu, const GpuProcess& p) {
  if (!p.gi_id) return nullptr;
  for (const GpuSample& g : s.gpus) {
    if (g.index != gpu || !g.mig_instances) continue;
    for (const MigInstance& m : *g.mig_instances)
      if (m.gi_id == *p.gi_id && (!p.ci_id || m.ci_id == *p.ci_id)) return &m;
  }
  return nullptr;
}

}  // namespace

std::string render_ps(const Sample& s, const std::vector<PsRow>& rows,
                      const std::vector<GpuOrphanHolders>& holders, PsFit fit) {
  const bool fitted = fit.width > 0 && !fit.wide;
  const size_t cmd_width = fit.wide ? 0 : 80;
  // SM% and MEM% are NVML's per-process utilisation (nvidia-smi pmon);
  // MIG is the process's GPU/compute instance.
  // The JOB column (Slurm jobs) only where some process has one.
  // The POD column likewise, where some process is in a pod.
  ExtraWidths extra;
  auto widen = [&](const ProcessSample* p) {
    if (p && p->slurm_job_id)
      extra.job = std::max(
          extra.job,
          std::min(kJobColumnMax, terminal_width(terminal_safe(
                                      slurm_job_label(s, p->slurm_job_id)))));
    if (p && p->pod)
      extra.pod =
          std::max(extra.pod,
                   std::min(kPodColumnMax,
                            terminal_width(terminal_safe(pod_label(p->pod)))));
  };
  for (const auto& r : rows) {
    if (!r.missing()) widen(r.proc);
    for (const ProcessSample* c : r.children) widen(c);
  }
  std::string out =
      fitted ? ""
             : fmt::format(
                   "{:<4} {:<5} {:<16} {:<10} {:>10} {:>4} {:>4} "
                   "{:>7} {:<7} {:>8} {:<20} {:<6} {}{}{}\n",
                   "GPU", "MIG", "PID", "USER", "GPU-MEM", "SM%", "MEM%",
                   "CPU%", "STATE", "ELAPSED", "CONTAINER", "CUDA",
                   extra.job ? fmt::format("{:<{}} ", "JOB", extra.job) : "",
                   extra.pod ? fmt::format("{:<{}} ", "POD", extra.pod) : "",
                   "COMMAND");
  std::vector<TableRow> table;
  int problems = 0;
  for (const auto& r : rows) {
    std::string mem = r.gpu_process.used_bytes
                          ? human_bytes(*r.gpu_process.used_bytes)
                          : std::string(kUnknown);
    std::string note;
    if (r.missing()) {
      note = "<-- NOT IN /proc: the owner is gone or in another PID namespace";
      ++problems;
    } else if (r.zombie()) {
      note = fmt::format("<-- ZOMBIE: memory is freed when parent {} reaps it",
                         r.proc->ppid ? fmt::format("{}", *r.proc->ppid) : "?");
      ++problems;
    }
    const GpuCols cols{mem, util_text(r.gpu_process.sm_util_pct),
                       util_text(r.gpu_process.mem_util_pct),
                       mig_text(r.gpu_process)};
    const ProcessSample* p = r.missing() ? nullptr : r.proc;
    const std::string gpu = std::to_string(r.gpu);
    const std::string pid = std::to_string(r.gpu_process.pid);
    if (fitted)
      table.push_back({cells_for(s, gpu, pid, cols, p), note});
    else
      out += line_for(s, gpu, pid, cols, p, note.empty() ? "" : "  " + note,
                      cmd_width, extra);
    for (size_t i = 0; i < r.children.size(); ++i) {
      std::string indent(static_cast<size_t>(2 * r.child_depth[i]), ' ');
      const std::string child =
          indent + "`- " + std::to_string(r.children[i]->pid);
      if (fitted)
        table.push_back(
            {cells_for(s, "", child, GpuCols{}, r.children[i]), ""});
      else
        out += line_for(s, "", child, GpuCols{}, r.children[i], "", cmd_width,
                        extra);
    }
  }
  if (fitted) out = render_table(ps_columns(), table, fit.width, false);
  if (rows.empty()) out += "(no GPU processes)\n";
  // Sentences wrap at the width (fitted), else one line each.
  const size_t wrap = fitted ? fit.width : 0;
  if (problems)
    out += "\n" + wrap_paragraph(fmt::format("!! {} GPU process(es) hold "
                                             "memory without a live owner: "
                                             "see `gpudoctor diagnose`",
                                             problems),
                                 wrap, 3);
  ProcessTree tree(s);
  for (const GpuOrphanHolders& g : holders) {
    out += "\n" + wrap_paragraph(
                      fmt::format("!! GPU {}: memory without a live owner is "
                                  "probably kept by who still holds its device "
                                  "files (most likely first):",
                                  g.gpu),
                      wrap, 3);
    for (const ProbableHolder& h : g.holders) {
      const ProcessSample* p = tree.find(h.pid);
      const std::string head = fmt::format(
          "   {:<8} {:<10} ", h.pid, terminal_cell(p ? p->user : "?", 10));
      const size_t left = wrap > head.size() + 12 ? wrap - head.size() : 60;
      out += head +
             terminal_fit(p ? (p->cmdline.empty() ? p->name : p->cmdline) : "?",
                          std::min<size_t>(left, 60)) +
             "\n";
      std::string why;
      for (const auto& e : h.evidence) why += (why.empty() ? "" : "; ") + e;
      out += wrap_paragraph("            " + why, wrap, 12);
    }
    out +=
        wrap_paragraph("   " + end_holders_advice(g.gpu, g.holders), wrap, 3);
  }
  return out;
}

namespace {

nlohmann::json process_json(const Sample& s, const ProcessSample& p) {
  nlohmann::json j;
  j["pid"] = p.pid;
  j["ppid"] = p.ppid ? nlohmann::json(*p.ppid) : nlohmann::json();
  j["user"] = p.user;
  j["name"] = p.name;
  j["cmdline"] = p.cmdline;
  j["state"] = p.state;
  j["cpu_pct"] = p.cpu_pct ? nlohmann::json(*p.cpu_pct) : nlohmann::json();
  j["threads"] = p.threads ? nlohmann::json(*p.threads) : nlohmann::json();
  j["rss_bytes"] =
      p.rss_bytes ? nlohmann::json(*p.rss_bytes) : nlohmann::json();
  j["cgroup"] = p.cgroup ? nlohmann::json(*p.cgroup) : nlohmann::json();
  j["slurm_job_id"] =
      p.slurm_job_id ? nlohmann::json(*p.slurm_job_id) : nlohmann::json();
  j["slurm_job"] = p.slurm_job_id
                       ? nlohmann::json(slurm_job_label(s, *p.slurm_job_id))
                       : nlohmann::json();
  std::string c = container_from_cgroup(p.cgroup).short_text();
  j["container"] = c.empty() ? nlohmann::json() : nlohmann::json(c);
  j["pod"] = pod_json(p.pod);
  j["libs"] = p.libs;
  std::string cuda = cuda_runtime_version(p.libs);
  j["cuda_runtime"] = cuda.empty() ? nlohmann::json() : nlohmann::json(cuda);
  j["elapsed_s"] =
      p.start_time ? nlohmann::json(s.t - *p.start_time) : nlohmann::json();
  return j;
}

}  // namespace

std::string ps_to_json(const Sample& s, const std::vector<PsRow>& rows,
                       const std::vector<GpuOrphanHolders>& holders) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : rows) {
    nlohmann::json j =
        r.proc && !r.missing()
            ? process_json(s, *r.proc)
            : nlohmann::json{{"pid", r.gpu_process.pid}, {"state", "missing"}};
    j["gpu"] = r.gpu;
    j["type"] = r.gpu_process.type;
    j["used_bytes"] = r.gpu_process.used_bytes
                          ? nlohmann::json(*r.gpu_process.used_bytes)
                          : nlohmann::json();
    auto opt_json = [](const auto& v) {
      return v ? nlohmann::json(*v) : nlohmann::json();
    };
    j["sm_util_pct"] = opt_json(r.gpu_process.sm_util_pct);
    j["mem_util_pct"] = opt_json(r.gpu_process.mem_util_pct);
    j["gi_id"] = opt_json(r.gpu_process.gi_id);
    j["ci_id"] = opt_json(r.gpu_process.ci_id);
    const MigInstance* m = instance_of(s, r.gpu, r.gpu_process);
    j["mig_profile"] = m ? nlohmann::json(m->profile) : nlohmann::json();
    j["mig_uuid"] = m ? nlohmann::json(m->uuid) : nlohmann::json();
    nlohmann::json kids = nlohmann::json::array();
    for (size_t i = 0; i < r.children.size(); ++i) {
      auto k = process_json(s, *r.children[i]);
      k["depth"] = r.child_depth[i];
      kids.push_back(std::move(k));
    }
    j["children"] = std::move(kids);
    out.push_back(std::move(j));
  }
  nlohmann::json held = nlohmann::json::array();
  for (const GpuOrphanHolders& g : holders)
    for (const ProbableHolder& h : g.holders) {
      const ProcessSample* p = nullptr;
      for (const auto& q : s.processes)
        if (q.pid == h.pid) p = &q;
      nlohmann::json j =
          p ? process_json(s, *p) : nlohmann::json{{"pid", h.pid}};
      j["gpu"] = g.gpu;
      j["dead_owners"] = g.dead_owners;
      j["evidence"] = h.evidence;
      j["action"] = fmt::format("gpudoctor kill {}", h.pid);
      held.push_back(std::move(j));
    }
  return nlohmann::json{{"t", s.t},
                        {"processes", std::move(out)},
                        {"orphan_holders", std::move(held)}}
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace gd
