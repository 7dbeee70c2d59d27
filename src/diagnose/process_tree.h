// The process tree of one sample, seen from the GPU: which host processes
// form a GPU job (a GPU process and its descendants, e.g. data-loader
// workers), and which GPU processes belong to one multi-GPU job (DDP ranks
// under one launcher such as torchrun or mpirun).
//
// Built per sample from Sample::processes (ppid links); nothing is kept
// between samples, so rules that use it stay bounded. Header-only so that
// the rules/*.cc glob of gd_diagnose is the only build input it needs.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "model/sample.h"

namespace gd {

// A process that starts the ranks of a distributed job: torchrun, mpirun,
// mpiexec(.hydra), deepspeed (and its inner "python -m
// deepspeed.launcher.launch"), accelerate, srun, horovodrun, or
// "python -m torch.distributed.run/launch".
bool is_launcher_process(const ProcessSample& p);

// A per-node daemon whose children are the tasks of ONE job step, started
// for it by a launcher elsewhere: Slurm's slurmstepd (srun's tasks on a
// compute node), MPICH/Intel MPI's hydra_pmi_proxy, Open MPI's orted/prted.
// It groups ranks like a launcher, but is not one the user started (so not
// is_launcher_process: tools that act on "the launcher" leave it alone).
bool is_job_step_daemon(const ProcessSample& p);

// A parent that says nothing about which job a process belongs to: shells,
// terminal multiplexers, sshd, init/systemd, container shims, sudo. Two GPU
// processes whose common parent is one of these are unrelated jobs.
bool is_generic_parent(const ProcessSample& p);

// True for "Z" (zombie) and "missing" (NVML lists it, /proc does not).
bool is_dead_state(std::string_view state);

// One GPU job in one sample: a root GPU process (no ancestor is a GPU
// process) and its descendants.
struct GpuJob {
  uint32_t pid = 0;                 // the root GPU process
  uint32_t group = 0;               // launcher / common parent, else `pid`
  std::vector<int> gpus;            // GPUs where the root or a descendant is listed
  std::vector<uint32_t> members;    // pid and all descendants
  std::vector<uint32_t> workers;    // descendants only (data-loader workers)
  double cpu_pct = 0;               // sum over members with known cpu_pct
  double main_cpu_pct = -1;         // the root's cpu_pct, -1 unknown
  int workers_known = 0;            // workers with known cpu_pct
  int workers_saturated = 0;        // of those, at or above the saturation mark
  // Of those, saturated or runnable (state R): a worker that always wants
  // the CPU is CPU-bound even when contention gives it less than a core.
  int workers_cpu_bound = 0;
  double workers_cpu_pct = 0;       // sum over workers with known cpu_pct
  bool visible = false;             // the root has a live entry in processes[]
};

class ProcessTree {
 public:
  explicit ProcessTree(const Sample& sample);

  // nullptr when `pid` has no entry in the sample's processes[].
  const ProcessSample* find(uint32_t pid) const;
  // All descendants of `pid` (children, grandchildren, ...), by ppid.
  std::vector<uint32_t> descendants(uint32_t pid) const;
  // The pid that groups GPU process `pid` with the other ranks of its job:
  // the nearest launcher ancestor, else its parent unless that parent is
  // generic (shell, init, ...), else `pid` itself. A parent without an
  // entry in processes[] (unknown) still groups: see job_group's body.
  uint32_t job_group(uint32_t pid) const;
  // True when `ancestor` is a (strict) ancestor of `pid`.
  bool is_ancestor(uint32_t ancestor, uint32_t pid) const;

  // The GPU jobs of the sample (one per root GPU process, live or not).
  // `worker_saturated_pct`: a worker at or above this CPU % counts as
  // saturated.
  std::vector<GpuJob> gpu_jobs(double worker_saturated_pct) const;

 private:
  const Sample& sample_;
  std::vector<const ProcessSample*> by_pid_;  // sorted by pid
  // (ppid, child pid), sorted: children of p are a contiguous range.
  std::vector<std::pair<uint32_t, uint32_t>> children_;
};

// ---- implementation ------------------------------------------------------

namespace process_tree_detail {

inline bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

// Last path component of the first word of a command line.
inline std::string_view program_of(std::string_view cmdline) {
  std::string_view first = cmdline.substr(0, cmdline.find(' '));
  size_t slash = first.rfind('/');
  return slash == std::string_view::npos ? first : first.substr(slash + 1);
}

inline bool name_in(std::string_view name, const auto& list) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

// Deep enough for any real tree; a cycle in corrupt ppid data stops here.
inline constexpr int kMaxDepth = 64;

}  // namespace process_tree_detail


inline bool is_launcher_process(const ProcessSample& p) {
  static constexpr std::array<std::string_view, 10> kLaunchers = {
      "torchrun",   "mpirun", "mpiexec",    "mpiexec.hydra", "deepspeed",
      "accelerate", "srun",   "horovodrun", "orterun",       "prterun"};
  if (process_tree_detail::name_in(p.name, kLaunchers)) return true;
  std::string_view prog = process_tree_detail::program_of(p.cmdline);
  if (process_tree_detail::name_in(prog, kLaunchers)) return true;
  // python -m torch.distributed.run / .launch, and the console scripts'
  // python wrappers ("python /usr/bin/torchrun ...").
  for (std::string_view marker :
       {"torch.distributed.run", "torch.distributed.launch", "/torchrun ",
        "/deepspeed ", "deepspeed.launcher.launch", "/accelerate launch",
        "accelerate launch"})
    if (process_tree_detail::contains(p.cmdline, marker)) return true;
  return false;
}

inline bool is_job_step_daemon(const ProcessSample& p) {
  static constexpr std::array<std::string_view, 4> kDaemons = {
      "slurmstepd", "hydra_pmi_proxy", "orted", "prted"};
  if (process_tree_detail::name_in(p.name, kDaemons)) return true;
  // slurmstepd's cmdline is "slurmstepd: [JOBID.STEP]".
  return p.cmdline.starts_with("slurmstepd:") ||
         process_tree_detail::name_in(process_tree_detail::program_of(p.cmdline), kDaemons);
}

inline bool is_generic_parent(const ProcessSample& p) {
  static constexpr std::array<std::string_view, 21> kGeneric = {
      "bash",   "sh",        "zsh",     "fish",         "dash",
      "ksh",    "tcsh",      "tmux",    "tmux: server", "screen",
      "SCREEN", "sshd",      "systemd", "init",         "sudo",
      "su",     "login",     "nohup",   "tini",         "dumb-init",
      "conmon"};
  if (p.pid <= 1) return true;
  if (process_tree_detail::name_in(p.name, kGeneric)) return true;
  return p.name.starts_with("containerd-shim") ||
         p.name.starts_with("docker-") || p.name.starts_with("runc");
}

inline bool is_dead_state(std::string_view state) {
  return state == "Z" || state == "missing";
}

inline ProcessTree::ProcessTree(const Sample& sample) : sample_(sample) {
  by_pid_.reserve(sample.processes.size());
  children_.reserve(sample.processes.size());
  for (const ProcessSample& p : sample.processes) {
    by_pid_.push_back(&p);
    if (p.ppid && *p.ppid != p.pid) children_.emplace_back(*p.ppid, p.pid);
  }
  std::sort(by_pid_.begin(), by_pid_.end(),
            [](const ProcessSample* a, const ProcessSample* b) {
              return a->pid < b->pid;
            });
  std::sort(children_.begin(), children_.end());
}

inline const ProcessSample* ProcessTree::find(uint32_t pid) const {
  auto it = std::lower_bound(
      by_pid_.begin(), by_pid_.end(), pid,
      [](const ProcessSample* p, uint32_t v) { return p->pid < v; });
  return it != by_pid_.end() && (*it)->pid == pid ? *it : nullptr;
}

inline std::vector<uint32_t> ProcessTree::descendants(uint32_t pid) const {
  std::vector<uint32_t> out;
  std::vector<std::pair<uint32_t, int>> todo = {{pid, 0}};
  while (!todo.empty()) {
    auto [cur, depth] = todo.back();
    todo.pop_back();
    if (depth >= process_tree_detail::kMaxDepth) continue;
    auto lo = std::lower_bound(children_.begin(), children_.end(),
                               std::make_pair(cur, uint32_t{0}));
    for (auto it = lo; it != children_.end() && it->first == cur; ++it) {
      if (it->second == pid ||
          std::find(out.begin(), out.end(), it->second) != out.end())
        continue;  // corrupt (cyclic) ppid data
      out.push_back(it->second);
      todo.emplace_back(it->second, depth + 1);
    }
  }
  return out;
}

inline bool ProcessTree::is_ancestor(uint32_t ancestor, uint32_t pid) const {
  const ProcessSample* p = find(pid);
  for (int depth = 0; p && p->ppid && depth < process_tree_detail::kMaxDepth; ++depth) {
    if (*p->ppid == ancestor) return true;
    p = find(*p->ppid);
  }
  return false;
}

inline uint32_t ProcessTree::job_group(uint32_t pid) const {
  const ProcessSample* self = find(pid);
  if (!self || !self->ppid) return pid;
  // Nearest launcher (or job-step daemon) ancestor first: torchrun ->
  // (elastic agent) -> rank; slurmstepd -> task.
  const ProcessSample* p = find(*self->ppid);
  for (int depth = 0; p && depth < process_tree_detail::kMaxDepth; ++depth) {
    if (is_launcher_process(*p) || is_job_step_daemon(*p)) return p->pid;
    if (!p->ppid) break;
    p = find(*p->ppid);
  }
  const ProcessSample* parent = find(*self->ppid);
  if (parent) return is_generic_parent(*parent) ? pid : parent->pid;
  // The parent is not in the sample (collectors list GPU processes and their
  // descendants, not ancestors): ranks of one job share their parent, so a
  // shared unknown parent other than init still groups them.
  return *self->ppid > 1 ? *self->ppid : pid;
}

inline std::vector<GpuJob> ProcessTree::gpu_jobs(double worker_saturated_pct) const {
  // Every GPU-listed pid with the GPUs it is on.
  std::vector<std::pair<uint32_t, int>> listed;  // (pid, gpu)
  for (const GpuSample& g : sample_.gpus) {
    if (g.lost || g.stale || !g.processes) continue;
    for (const GpuProcess& gp : *g.processes) listed.emplace_back(gp.pid, g.index);
  }
  std::sort(listed.begin(), listed.end());
  listed.erase(std::unique(listed.begin(), listed.end()), listed.end());

  auto is_listed = [&](uint32_t pid) {
    auto it = std::lower_bound(listed.begin(), listed.end(),
                               std::make_pair(pid, -1 << 30));
    return it != listed.end() && it->first == pid;
  };

  std::vector<GpuJob> jobs;
  for (size_t i = 0; i < listed.size(); ++i) {
    uint32_t pid = listed[i].first;
    if (i > 0 && listed[i - 1].first == pid) continue;
    // A root has no GPU-listed ancestor (a worker that also made a CUDA
    // context belongs to its parent's job).
    bool has_gpu_ancestor = false;
    const ProcessSample* p = find(pid);
    for (int depth = 0; p && p->ppid && depth < process_tree_detail::kMaxDepth; ++depth) {
      if (is_listed(*p->ppid)) {
        has_gpu_ancestor = true;
        break;
      }
      p = find(*p->ppid);
    }
    if (has_gpu_ancestor) continue;

    GpuJob job;
    job.pid = pid;
    job.group = job_group(pid);
    const ProcessSample* root = find(pid);
    job.visible = root && !is_dead_state(root->state);
    job.workers = descendants(pid);
    job.members.push_back(pid);
    job.members.insert(job.members.end(), job.workers.begin(), job.workers.end());
    for (uint32_t m : job.members)
      for (auto it = std::lower_bound(listed.begin(), listed.end(),
                                      std::make_pair(m, -1 << 30));
           it != listed.end() && it->first == m; ++it)
        job.gpus.push_back(it->second);
    std::sort(job.gpus.begin(), job.gpus.end());
    job.gpus.erase(std::unique(job.gpus.begin(), job.gpus.end()), job.gpus.end());

    if (root && root->cpu_pct) {
      job.main_cpu_pct = *root->cpu_pct;
      job.cpu_pct += *root->cpu_pct;
    }
    for (uint32_t w : job.workers) {
      const ProcessSample* wp = find(w);
      if (!wp || !wp->cpu_pct) continue;
      ++job.workers_known;
      job.cpu_pct += *wp->cpu_pct;
      job.workers_cpu_pct += *wp->cpu_pct;
      if (*wp->cpu_pct >= worker_saturated_pct) ++job.workers_saturated;
      if (*wp->cpu_pct >= worker_saturated_pct || wp->state == "R") ++job.workers_cpu_bound;
    }
    jobs.push_back(std::move(job));
  }
  return jobs;
}

}  // namespace gd
