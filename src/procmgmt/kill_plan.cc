#include "procmgmt/kill_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "common/int_list.h"
#include "model/process_tree.h"

namespace gd::procmgmt {

bool is_launcher(const ProcEntry& p) {
  return is_launcher_process(p.comm, p.cmdline);
}

namespace {

constexpr uint32_t kInitPid = 1;

class Planner {
 public:
  Planner(const KillRequest& r, const KillContext& c, const ProcSnapshot& p)
      : req_(r), ctx_(c), procs_(p) {
    for (const auto& [gpu, pids] : ctx_.gpu_pids)
      for (uint32_t pid : pids) gpus_of_[pid].push_back(gpu);
    self_ancestors_ = procs_.ancestors(ctx_.self_pid);
  }

  KillPlan plan() {
    std::vector<std::pair<uint32_t, std::string>> selected;  // (pid, role)
    for (uint32_t pid : req_.pids) {
      if (!procs_.find(pid)) {
        plan_.not_found.push_back(pid);
        continue;
      }
      selected.emplace_back(pid, role_of(pid));
    }
    for (int gpu : req_.gpus) {
      auto it = ctx_.gpu_pids.find(gpu);
      if (it != ctx_.gpu_pids.end()) {
        for (uint32_t pid : it->second) {
          if (req_.mig_gi && !on_instance(gpu, pid, *req_.mig_gi)) continue;
          if (!procs_.find(pid)) {
            plan_.notes.push_back(
                fmt::format("pid {} is listed on GPU {} but is not in /proc "
                            "(gone, or in another PID "
                            "namespace): it cannot be signalled from here",
                            pid, gpu));
            continue;
          }
          selected.emplace_back(pid, gpu_role(gpu, pid));
        }
      }
      // What keeps the memory of a dead owner is the process that still
      // holds the GPU's device files: ending it frees the memory.
      for (const auto& [pid, gpus] : ctx_.orphan_holders)
        if (!req_.mig_gi &&
            std::find(gpus.begin(), gpus.end(), gpu) != gpus.end())
          selected.emplace_back(pid, orphan_role(pid));
    }
    // --user filters what was named (so another user's job is not even
    // expanded) and, below, everything --tree adds.
    keep_requested_user(selected);
    if (req_.tree) {
      std::vector<std::pair<uint32_t, std::string>> expanded;
      for (const auto& [pid, role] : selected) {
        uint32_t root = job_root(pid);
        add_once(expanded, root,
                 root == pid
                     ? role
                     : fmt::format("{} of {}",
                                   is_launcher(*procs_.find(root)) ? "launcher"
                                                                   : "job root",
                                   pid));
        for (uint32_t d : job_members(root))
          add_once(expanded, d, role_of_member(d, root));
      }
      selected = std::move(expanded);
      keep_requested_user(selected);
    }
    std::vector<uint32_t> seen;
    for (const auto& [pid, role] : selected) {
      if (std::find(seen.begin(), seen.end(), pid) != seen.end()) continue;
      seen.push_back(pid);
      check(pid, role);
    }
    return std::move(plan_);
  }

 private:
  static void add_once(std::vector<std::pair<uint32_t, std::string>>& v,
                       uint32_t pid, std::string role) {
    for (const auto& e : v)
      if (e.first == pid) return;
    v.emplace_back(pid, std::move(role));
  }

  bool is_gpu_process(uint32_t pid) const { return gpus_of_.count(pid) > 0; }
  bool is_orphan_holder(uint32_t pid) const {
    return ctx_.orphan_holders.count(pid) > 0;
  }

  std::string orphan_role(uint32_t pid) const {
    return "holds orphaned memory on GPU " +
           join_ints(ctx_.orphan_holders.at(pid), ",");
  }

  bool on_instance(int gpu, uint32_t pid, uint32_t gi) const {
    auto it = ctx_.gpu_instance.find({gpu, pid});
    return it != ctx_.gpu_instance.end() && it->second == gi;
  }

  // "GPU process on GPU 0", or on a MIG instance "GPU process on GPU 0 MIG
  // 1 (3g.40gb)".
  std::string gpu_role(int gpu, uint32_t pid) const {
    auto it = ctx_.gpu_instance.find({gpu, pid});
    if (it == ctx_.gpu_instance.end())
      return fmt::format("GPU process on GPU {}", gpu);
    auto prof = ctx_.instance_profile.find({gpu, it->second});
    return fmt::format(
        "GPU process on GPU {} MIG {}{}", gpu, it->second,
        prof == ctx_.instance_profile.end() ? "" : " (" + prof->second + ")");
  }

  void keep_requested_user(std::vector<std::pair<uint32_t, std::string>>& v) {
    if (req_.user.empty()) return;
    std::erase_if(v, [&](const auto& s) {
      const ProcEntry* p = procs_.find(s.first);
      bool other = p->user != req_.user &&
                   (!p->uid || std::to_string(*p->uid) != req_.user);
      if (other && noted_other_user_.insert(s.first).second)
        plan_.notes.push_back(
            fmt::format("pid {} belongs to {}, not {}: left alone", s.first,
                        p->user, req_.user));
      return other;
    });
  }

  // PID 1 of the host or of its own PID namespace (a container whose
  // workload is its PID 1). Every orphan of that namespace is re-parented to
  // it, so being below it says nothing about belonging to its job.
  bool is_namespace_init(uint32_t pid) const {
    if (pid == kInitPid) return true;
    const ProcEntry* p = procs_.find(pid);
    return p && !p->nspid.empty() && p->nspid.back() == kInitPid;
  }

  // The program a process runs: argv[0], else its comm.
  static std::string program_of(const ProcEntry& p) {
    std::string argv0 = p.cmdline.substr(0, p.cmdline.find(' '));
    return argv0.empty() ? p.comm : argv0;
  }

  // Whether `pid` is a real worker of `init`, a namespace's PID 1: it and
  // every process between them run init's own program (forked data-loader
  // workers do; a shell, sshd or re-parented daemon does not).
  bool is_worker_of_init(uint32_t pid, uint32_t init) const {
    const ProcEntry* top = procs_.find(init);
    if (!top) return false;
    const std::string program = program_of(*top);
    uint32_t cur = pid;
    for (int depth = 0; cur != init && depth < kMaxTreeDepth; ++depth) {
      const ProcEntry* p = procs_.find(cur);
      if (!p || program_of(*p) != program) return false;
      cur = p->ppid;
    }
    return cur == init;
  }

  // The nearest GPU-listed ancestor (a worker's trainer), or 0. A namespace's
  // PID 1 counts only for its real workers (is_worker_of_init).
  uint32_t gpu_ancestor(uint32_t pid) const {
    for (uint32_t a : procs_.ancestors(pid)) {
      if (!is_gpu_process(a)) continue;
      if (is_namespace_init(a) && !is_worker_of_init(pid, a)) return 0;
      return a;
    }
    return 0;
  }

  // What --tree adds below a job's root: its descendants, except that a
  // namespace's PID 1 is never a job covering the whole namespace: only its
  // real workers come with it.
  std::vector<uint32_t> job_members(uint32_t root) const {
    std::vector<uint32_t> members = procs_.descendants(root);
    if (is_namespace_init(root))
      std::erase_if(members,
                    [&](uint32_t d) { return !is_worker_of_init(d, root); });
    return members;
  }

  // A GPU-listed zombie child of `pid`, or 0: its memory is freed only when
  // `pid` reaps it (or exits), so ending `pid` is how it is freed.
  uint32_t zombie_gpu_child(uint32_t pid) const {
    for (uint32_t c : procs_.children(pid)) {
      const ProcEntry* p = procs_.find(c);
      if (p && p->zombie() && is_gpu_process(c)) return c;
    }
    return 0;
  }

  std::string role_of(uint32_t pid) const {
    if (is_gpu_process(pid)) {
      return "GPU process on GPU " + join_ints(gpus_of_.at(pid), ",");
    }
    if (is_orphan_holder(pid)) return orphan_role(pid);
    if (uint32_t a = gpu_ancestor(pid))
      return fmt::format("worker of GPU process {}", a);
    if (uint32_t z = zombie_gpu_child(pid))
      return fmt::format("parent of unreaped zombie {}", z);
    return "not a GPU process";
  }

  std::string role_of_member(uint32_t pid, uint32_t root) const {
    if (is_gpu_process(pid) || is_orphan_holder(pid)) return role_of(pid);
    if (uint32_t a = gpu_ancestor(pid))
      return fmt::format("worker of GPU process {}", a);
    return fmt::format("member of job {}", root);
  }

  // The job a process belongs to: its nearest launcher ancestor (torchrun,
  // mpirun, ...), else its topmost GPU-process ancestor, else itself. The
  // walk stops at a namespace's PID 1 unless `pid` is its real worker.
  uint32_t job_root(uint32_t pid) const {
    uint32_t root = pid;
    for (uint32_t a : procs_.ancestors(pid)) {
      const ProcEntry* p = procs_.find(a);
      if (!p || a <= kInitPid) break;
      if (is_namespace_init(a)) {
        if (is_gpu_process(a) && is_worker_of_init(pid, a)) root = a;
        break;
      }
      if (is_launcher(*p)) return a;
      if (is_gpu_process(a)) root = a;
    }
    return root;
  }

  // A launcher that has a GPU process below it (the job's top).
  bool launches_gpu_process(uint32_t pid) const {
    const ProcEntry* p = procs_.find(pid);
    if (!p || !is_launcher(*p)) return false;
    for (uint32_t d : procs_.descendants(pid))
      if (is_gpu_process(d)) return true;
    return false;
  }

  void refuse(uint32_t pid, std::string why) {
    plan_.refusals.push_back({pid, std::move(why)});
  }

  void check(uint32_t pid, const std::string& role) {
    const ProcEntry* p = procs_.find(pid);
    if (!p) return;
    if (pid == kInitPid) return refuse(pid, "PID 1 (init) is never signalled");
    if (p->kernel_thread())
      return refuse(pid, "a kernel thread is never signalled");
    if (pid == ctx_.self_pid) return refuse(pid, "that is gpudoctor itself");
    if (std::find(self_ancestors_.begin(), self_ancestors_.end(), pid) !=
        self_ancestors_.end())
      return refuse(
          pid, "an ancestor of gpudoctor (the shell or session that runs it)");
    bool gpu_related = is_gpu_process(pid) || is_orphan_holder(pid) ||
                       gpu_ancestor(pid) != 0 || zombie_gpu_child(pid) != 0 ||
                       (req_.tree && launches_gpu_process(pid));
    if (!gpu_related && !req_.any)
      return refuse(
          pid,
          "not a GPU process nor a descendant of one (add --any to allow)");
    if (ctx_.euid != 0 && p->uid && *p->uid != ctx_.euid)
      return refuse(
          pid, fmt::format("owned by {}; only root may signal another user's "
                           "processes",
                           p->user));
    KillTarget t{*p, role, {}};
    if (auto it = gpus_of_.find(pid); it != gpus_of_.end()) t.gpus = it->second;
    if (p->zombie())
      plan_.zombies.push_back(std::move(t));
    else
      plan_.targets.push_back(std::move(t));
  }

  const KillRequest& req_;
  const KillContext& ctx_;
  const ProcSnapshot& procs_;
  std::map<uint32_t, std::vector<int>> gpus_of_;
  std::vector<uint32_t> self_ancestors_;
  std::set<uint32_t> noted_other_user_;
  KillPlan plan_;
};

}  // namespace

KillPlan plan_kill(const KillRequest& request, const KillContext& context,
                   const ProcSnapshot& procs) {
  return Planner(request, context, procs).plan();
}

}  // namespace gd::procmgmt
