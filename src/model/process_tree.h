// The one process model of gpudoctor: parent/child links over pids, what a
// process is to a GPU job (launcher, job-step daemon, generic parent), and
// the GPU jobs of one sample (a GPU process and its descendants, e.g.
// data-loader workers; DDP ranks grouped under one launcher such as
// torchrun or mpirun).
//
// Every consumer that walks a process tree uses this: diagnose's rules,
// procmgmt (kill, ps --tree over a /proc snapshot), the checklist and the
// views. Built per sample (or per snapshot); nothing is kept between them.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "model/sample.h"

namespace gd {

// A process that starts the ranks of a distributed job: torchrun, mpirun,
// mpiexec(.hydra), deepspeed (and its inner "python -m
// deepspeed.launcher.launch"), accelerate, srun, horovodrun, or
// "python -m torch.distributed.run/launch". `name` is the comm.
bool is_launcher_process(std::string_view name, std::string_view cmdline);

// A per-node daemon whose children are the tasks of ONE job step, started
// for it by a launcher elsewhere: Slurm's slurmstepd (srun's tasks on a
// compute node), MPICH/Intel MPI's hydra_pmi_proxy, Open MPI's orted/prted.
// It groups ranks like a launcher, but is not one the user started (so not
// is_launcher_process: tools that act on "the launcher" leave it alone).
bool is_job_step_daemon(std::string_view name, std::string_view cmdline);

// A parent that says nothing about which job a process belongs to: shells,
// terminal multiplexers, sshd, init/systemd, container shims, sudo. Two GPU
// processes whose common parent is one of these are unrelated jobs.
bool is_generic_parent(uint32_t pid, std::string_view name);

// Where the walk up from a GPU process to the process that groups its job
// ends: a launcher, a job-step daemon or a generic parent. The sampler
// lists a GPU process's ancestors up to and including this one.
bool ends_job_ancestry(uint32_t pid, std::string_view name,
                       std::string_view cmdline);

bool is_launcher_process(const ProcessSample& p);
bool is_job_step_daemon(const ProcessSample& p);
bool is_generic_parent(const ProcessSample& p);

// True for "Z" (zombie) and "missing" (NVML lists it, /proc does not).
bool is_dead_state(std::string_view state);

// Deep enough for any real tree; a cycle in corrupt ppid data stops here.
inline constexpr int kMaxTreeDepth = 128;

// Parent/child links of a set of processes. Cycles and self-parents in
// corrupt data (hand-written traces) are tolerated: every walk ends.
class PidTree {
 public:
  PidTree() = default;
  // (pid, ppid) of every process; ppid 0 or the pid itself: no parent.
  explicit PidTree(std::vector<std::pair<uint32_t, uint32_t>> pid_ppid);
  // The links of `processes` (those with a ppid), reusing this tree's
  // storage.
  void assign(const std::vector<ProcessSample>& processes);

  // The recorded parent of `pid`; nullopt when `pid` is not in the tree or
  // has none.
  std::optional<uint32_t> parent(uint32_t pid) const;
  // Direct children, ascending pid.
  std::vector<uint32_t> children(uint32_t pid) const;

  struct Descendant {
    uint32_t pid = 0;
    int depth = 0;  // 1 = direct child
  };
  // Children, grandchildren, ... depth-first, each parent before its
  // children, siblings in ascending pid order.
  std::vector<Descendant> walk_descendants(uint32_t pid) const;
  void walk_descendants(uint32_t pid, std::vector<Descendant>& out) const;
  // The same pids without depths.
  std::vector<uint32_t> descendants(uint32_t pid) const;
  void descendants(uint32_t pid, std::vector<uint32_t>& out) const;
  // Parent, grandparent, ... up to the first one without a recorded parent
  // (which is included: pid 1's parent is 0, so not).
  std::vector<uint32_t> ancestors(uint32_t pid) const;
  // True when `ancestor` is a (strict) ancestor of `pid`.
  bool is_ancestor(uint32_t ancestor, uint32_t pid) const;
  // True when `pred` holds for one of ancestors(pid), without building the
  // list (this runs for every GPU process of every sample). On cyclic ppid
  // data it may ask about an ancestor more than once, never about `pid`.
  template <typename Pred>
  bool any_ancestor(uint32_t pid, Pred pred) const {
    std::optional<uint32_t> up = parent(pid);
    for (int depth = 0; up && *up != pid && depth < kMaxTreeDepth; ++depth) {
      if (pred(*up)) return true;
      up = parent(*up);
    }
    return false;
  }

 private:
  // The (ppid, child) entries of `pid`'s children, ascending child pid.
  std::span<const std::pair<uint32_t, uint32_t>> children_of(
      uint32_t pid) const;

  void index();  // drops non-links, sorts, builds children_

  std::vector<std::pair<uint32_t, uint32_t>> parent_of_;  // (pid, ppid)
  std::vector<std::pair<uint32_t, uint32_t>> children_;   // (ppid, pid)
};

// One GPU job in one sample: a root GPU process (no ancestor is a GPU
// process) and its descendants.
struct GpuJob {
  uint32_t pid = 0;               // the root GPU process
  uint32_t group = 0;             // launcher / common parent, else `pid`
  std::vector<int> gpus;          // GPUs where the root or a descendant is
  std::vector<uint32_t> members;  // pid and all descendants
  std::vector<uint32_t> workers;  // descendants only (data-loader workers)
  double cpu_pct = 0;             // sum over members with known cpu_pct
  double main_cpu_pct = -1;       // the root's cpu_pct, -1 unknown
  int workers_known = 0;          // workers with known cpu_pct
  int workers_saturated = 0;      // of those, at or above the saturation mark
  // Of those, saturated or runnable (state R): a worker that always wants
  // the CPU is CPU-bound even when contention gives it less than a core.
  int workers_cpu_bound = 0;
  double workers_cpu_pct = 0;  // sum over workers with known cpu_pct
  bool visible = false;        // the root has a live entry in processes[]
};

// The process tree of one sample, seen from the GPU. Keeps a reference to
// `sample`, which must outlive it (or the next rebuild).
class ProcessTree {
 public:
  explicit ProcessTree(const Sample& sample);
  // The tree of another sample, in this one's storage: a reader of many
  // samples keeps one tree instead of allocating one per sample.
  void rebuild(const Sample& sample);

  // nullptr when `pid` has no entry in the sample's processes[].
  const ProcessSample* find(uint32_t pid) const;
  // The sample the tree is of.
  const Sample& sample() const { return *sample_; }
  const PidTree& links() const { return links_; }
  std::vector<uint32_t> children(uint32_t pid) const {
    return links_.children(pid);
  }
  std::vector<uint32_t> descendants(uint32_t pid) const {
    return links_.descendants(pid);
  }
  // Descendants that are not zombies: the workers `pid` still has.
  std::vector<uint32_t> live_descendants(uint32_t pid) const;
  bool is_ancestor(uint32_t ancestor, uint32_t pid) const {
    return links_.is_ancestor(ancestor, pid);
  }
  // The pid that groups GPU process `pid` with the other ranks of its job:
  // the nearest launcher ancestor, else its parent unless that parent is
  // generic (shell, init, ...), else `pid` itself. A parent without an
  // entry in processes[] (unknown) still groups: see job_group's body.
  uint32_t job_group(uint32_t pid) const;

  // The GPU jobs of the sample (one per root GPU process, live or not).
  // `worker_saturated_pct`: a worker at or above this CPU % counts as
  // saturated.
  std::vector<GpuJob> gpu_jobs(double worker_saturated_pct) const;
  // The same into `jobs`, whose vectors are reused.
  void gpu_jobs(double worker_saturated_pct, std::vector<GpuJob>& jobs) const;
  // Recounts workers_saturated and workers_cpu_bound of `jobs` (this
  // sample's) for another mark: the jobs themselves do not depend on it, so
  // a second mark costs a copy instead of another walk of the tree.
  void count_saturated(std::vector<GpuJob>& jobs,
                       double worker_saturated_pct) const;

 private:
  const Sample* sample_ = nullptr;
  std::vector<const ProcessSample*> by_pid_;  // sorted by pid
  std::vector<uint32_t> pids_;                // by_pid_[i]->pid
  PidTree links_;
};

}  // namespace gd
