#include "model/process_tree.h"

#include <algorithm>
#include <array>

namespace gd {

namespace {

bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

// Last path component of the first word of a command line.
std::string_view program_of(std::string_view cmdline) {
  std::string_view first = cmdline.substr(0, cmdline.find(' '));
  size_t slash = first.rfind('/');
  return slash == std::string_view::npos ? first : first.substr(slash + 1);
}

bool name_in(std::string_view name, const auto& list) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

}  // namespace

bool is_launcher_process(std::string_view name, std::string_view cmdline) {
  static constexpr std::array<std::string_view, 10> kLaunchers = {
      "torchrun",   "mpirun", "mpiexec",    "mpiexec.hydra", "deepspeed",
      "accelerate", "srun",   "horovodrun", "orterun",       "prterun"};
  if (name_in(name, kLaunchers)) return true;
  if (name_in(program_of(cmdline), kLaunchers)) return true;
  // python -m torch.distributed.run / .launch, and the console scripts'
  // python wrappers ("python /usr/bin/torchrun ...").
  for (std::string_view marker :
       {"torch.distributed.run", "torch.distributed.launch", "/torchrun ",
        "/deepspeed ", "deepspeed.launcher.launch", "/accelerate launch",
        "accelerate launch"})
    if (contains(cmdline, marker)) return true;
  return false;
}

bool is_job_step_daemon(std::string_view name, std::string_view cmdline) {
  static constexpr std::array<std::string_view, 4> kDaemons = {
      "slurmstepd", "hydra_pmi_proxy", "orted", "prted"};
  if (name_in(name, kDaemons)) return true;
  // slurmstepd's cmdline is "slurmstepd: [JOBID.STEP]".
  return cmdline.starts_with("slurmstepd:") ||
         name_in(program_of(cmdline), kDaemons);
}

bool is_generic_parent(uint32_t pid, std::string_view name) {
  static constexpr std::array<std::string_view, 21> kGeneric = {
      "bash",    "sh",        "zsh",          "fish",   "dash",   "ksh",
      "tcsh",    "tmux",      "tmux: server", "screen", "SCREEN", "sshd",
      "systemd", "init",      "sudo",         "su",     "login",  "nohup",
      "tini",    "dumb-init", "conmon"};
  if (pid <= 1) return true;
  if (name_in(name, kGeneric)) return true;
  return name.starts_with("containerd-shim") || name.starts_with("docker-") ||
         name.starts_with("runc");
}

bool ends_job_ancestry(uint32_t pid, std::string_view name,
                       std::string_view cmdline) {
  return is_launcher_process(name, cmdline) ||
         is_job_step_daemon(name, cmdline) || is_generic_parent(pid, name);
}

bool is_launcher_process(const ProcessSample& p) {
  return is_launcher_process(p.name, p.cmdline);
}

bool is_job_step_daemon(const ProcessSample& p) {
  return is_job_step_daemon(p.name, p.cmdline);
}

bool is_generic_parent(const ProcessSample& p) {
  return is_generic_parent(p.pid, p.name);
}

bool is_dead_state(std::string_view state) {
  return state == "Z" || state == "missing";
}

// ---- PidTree ---------------------------------------------------------------

PidTree::PidTree(std::vector<std::pair<uint32_t, uint32_t>> pid_ppid)
    : parent_of_(std::move(pid_ppid)) {
  index();
}

void PidTree::assign(const std::vector<ProcessSample>& processes) {
  parent_of_.clear();
  for (const ProcessSample& p : processes)
    if (p.ppid) parent_of_.emplace_back(p.pid, *p.ppid);
  index();
}

void PidTree::index() {
  std::erase_if(parent_of_, [](const auto& e) {
    return e.second == 0 || e.second == e.first;
  });
  std::sort(parent_of_.begin(), parent_of_.end());
  children_.clear();
  children_.reserve(parent_of_.size());
  for (const auto& [pid, ppid] : parent_of_) children_.emplace_back(ppid, pid);
  std::sort(children_.begin(), children_.end());
  children_.erase(std::unique(children_.begin(), children_.end()),
                  children_.end());
}

std::optional<uint32_t> PidTree::parent(uint32_t pid) const {
  auto it = std::lower_bound(parent_of_.begin(), parent_of_.end(),
                             std::make_pair(pid, uint32_t{0}));
  if (it == parent_of_.end() || it->first != pid) return std::nullopt;
  return it->second;
}

std::span<const std::pair<uint32_t, uint32_t>> PidTree::children_of(
    uint32_t pid) const {
  auto lo = std::lower_bound(children_.begin(), children_.end(),
                             std::make_pair(pid, uint32_t{0}));
  auto hi = lo;
  while (hi != children_.end() && hi->first == pid) ++hi;
  return {lo, hi};
}

std::vector<uint32_t> PidTree::children(uint32_t pid) const {
  std::vector<uint32_t> out;
  for (const auto& [ppid, child] : children_of(pid)) out.push_back(child);
  return out;
}

std::vector<PidTree::Descendant> PidTree::walk_descendants(uint32_t pid) const {
  std::vector<Descendant> out;
  walk_descendants(pid, out);
  return out;
}

void PidTree::walk_descendants(uint32_t pid,
                               std::vector<Descendant>& out) const {
  out.clear();
  // Scratch kept per thread: this runs for every GPU job of every sample.
  thread_local std::vector<uint32_t> seen;  // corrupt (cyclic) ppid data
  thread_local std::vector<Descendant> todo;
  seen.assign(1, pid);
  todo.clear();
  // Children are pushed in reverse so the smallest pid is walked first; read
  // in place (a vector per node was most of the walk's cost).
  auto push_children = [&](uint32_t p, int depth) {
    if (depth > kMaxTreeDepth) return;
    auto kids = children_of(p);
    for (auto it = kids.rbegin(); it != kids.rend(); ++it)
      todo.push_back({it->second, depth});
  };
  push_children(pid, 1);
  while (!todo.empty()) {
    Descendant cur = todo.back();
    todo.pop_back();
    if (std::find(seen.begin(), seen.end(), cur.pid) != seen.end()) continue;
    seen.push_back(cur.pid);
    out.push_back(cur);
    push_children(cur.pid, cur.depth + 1);
  }
}

std::vector<uint32_t> PidTree::descendants(uint32_t pid) const {
  std::vector<uint32_t> out;
  descendants(pid, out);
  return out;
}

void PidTree::descendants(uint32_t pid, std::vector<uint32_t>& out) const {
  thread_local std::vector<Descendant> walk;
  walk_descendants(pid, walk);
  out.clear();
  for (const Descendant& d : walk) out.push_back(d.pid);
}

std::vector<uint32_t> PidTree::ancestors(uint32_t pid) const {
  std::vector<uint32_t> out;
  out.reserve(8);
  std::optional<uint32_t> up = parent(pid);
  for (int depth = 0; up && depth < kMaxTreeDepth; ++depth) {
    if (*up == pid || std::find(out.begin(), out.end(), *up) != out.end())
      break;  // cyclic ppid data
    out.push_back(*up);
    up = parent(*up);
  }
  return out;
}

bool PidTree::is_ancestor(uint32_t ancestor, uint32_t pid) const {
  return any_ancestor(pid, [&](uint32_t a) { return a == ancestor; });
}

// ---- ProcessTree -----------------------------------------------------------

ProcessTree::ProcessTree(const Sample& sample) { rebuild(sample); }

void ProcessTree::rebuild(const Sample& sample) {
  sample_ = &sample;
  links_.assign(sample.processes);
  by_pid_.clear();
  for (const ProcessSample& p : sample.processes) by_pid_.push_back(&p);
  std::stable_sort(by_pid_.begin(), by_pid_.end(),
                   [](const ProcessSample* a, const ProcessSample* b) {
                     return a->pid < b->pid;
                   });
  pids_.clear();
  for (const ProcessSample* p : by_pid_) pids_.push_back(p->pid);
}

const ProcessSample* ProcessTree::find(uint32_t pid) const {
  // Searched in the pids alone, side by side in memory, rather than through
  // the pointers: the rules ask for every worker of every job of every
  // sample (a tenth of top's CPU when it went through the pointers).
  auto it = std::lower_bound(pids_.begin(), pids_.end(), pid);
  if (it == pids_.end() || *it != pid) return nullptr;
  return by_pid_[static_cast<size_t>(it - pids_.begin())];
}

std::vector<uint32_t> ProcessTree::live_descendants(uint32_t pid) const {
  std::vector<uint32_t> out = descendants(pid);
  std::erase_if(out, [&](uint32_t d) {
    const ProcessSample* p = find(d);
    return p && p->state == "Z";
  });
  return out;
}

uint32_t ProcessTree::job_group(uint32_t pid) const {
  const ProcessSample* self = find(pid);
  if (!self || !self->ppid) return pid;
  // Nearest launcher (or job-step daemon) ancestor first: torchrun ->
  // (elastic agent) -> rank; slurmstepd -> task.
  std::optional<uint32_t> launcher;
  links_.any_ancestor(pid, [&](uint32_t a) {
    const ProcessSample* p = find(a);
    if (!p) return true;  // the chain goes on outside the sample: stop
    if (is_launcher_process(*p) || is_job_step_daemon(*p)) launcher = p->pid;
    return launcher.has_value();
  });
  if (launcher) return *launcher;
  const ProcessSample* parent = find(*self->ppid);
  if (parent) return is_generic_parent(*parent) ? pid : parent->pid;
  // The parent is not in the sample (older traces list GPU processes and
  // their descendants, not ancestors): ranks of one job share their parent,
  // so a shared unknown parent other than init still groups them.
  return *self->ppid > 1 ? *self->ppid : pid;
}

std::vector<GpuJob> ProcessTree::gpu_jobs(double worker_saturated_pct) const {
  std::vector<GpuJob> jobs;
  gpu_jobs(worker_saturated_pct, jobs);
  return jobs;
}

void ProcessTree::gpu_jobs(double worker_saturated_pct,
                           std::vector<GpuJob>& jobs) const {
  // Every GPU-listed pid with the GPUs it is on.
  thread_local std::vector<std::pair<uint32_t, int>> listed;  // (pid, gpu)
  listed.clear();
  for (const GpuSample& g : sample_->gpus) {
    if (g.lost || g.stale || !g.processes) continue;
    for (const GpuProcess& gp : *g.processes)
      listed.emplace_back(gp.pid, g.index);
  }
  std::sort(listed.begin(), listed.end());
  listed.erase(std::unique(listed.begin(), listed.end()), listed.end());

  auto first_of = [&](uint32_t pid) {
    return std::lower_bound(listed.begin(), listed.end(),
                            std::make_pair(pid, -1 << 30));
  };
  auto is_listed = [&](uint32_t pid) {
    auto it = first_of(pid);
    return it != listed.end() && it->first == pid;
  };

  // Jobs are filled in place: their vectors keep their storage from the
  // last sample (allocation was a tenth of `diagnose --from`'s CPU).
  size_t n = 0;
  for (size_t i = 0; i < listed.size(); ++i) {
    uint32_t pid = listed[i].first;
    if (i > 0 && listed[i - 1].first == pid) continue;
    // A root has no GPU-listed ancestor (a worker that also made a CUDA
    // context belongs to its parent's job).
    if (links_.any_ancestor(pid, is_listed)) continue;

    if (n == jobs.size()) jobs.emplace_back();
    GpuJob& job = jobs[n++];
    job.pid = pid;
    job.group = job_group(pid);
    const ProcessSample* root = find(pid);
    job.visible = root && !is_dead_state(root->state);
    links_.descendants(pid, job.workers);
    job.members.assign(1, pid);
    job.members.insert(job.members.end(), job.workers.begin(),
                       job.workers.end());
    job.gpus.clear();
    for (uint32_t m : job.members)
      for (auto it = first_of(m); it != listed.end() && it->first == m; ++it)
        job.gpus.push_back(it->second);
    std::sort(job.gpus.begin(), job.gpus.end());
    job.gpus.erase(std::unique(job.gpus.begin(), job.gpus.end()),
                   job.gpus.end());

    job.cpu_pct = 0;
    job.main_cpu_pct = -1;
    job.workers_known = 0;
    job.workers_cpu_pct = 0;
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
    }
  }
  jobs.resize(n);
  count_saturated(jobs, worker_saturated_pct);
}

void ProcessTree::count_saturated(std::vector<GpuJob>& jobs,
                                  double worker_saturated_pct) const {
  for (GpuJob& job : jobs) {
    job.workers_saturated = job.workers_cpu_bound = 0;
    for (uint32_t w : job.workers) {
      const ProcessSample* wp = find(w);
      if (!wp || !wp->cpu_pct) continue;
      if (*wp->cpu_pct >= worker_saturated_pct) ++job.workers_saturated;
      if (*wp->cpu_pct >= worker_saturated_pct || wp->state == "R")
        ++job.workers_cpu_bound;
    }
  }
}

}  // namespace gd
