#include "procmgmt/kill_session.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>

#include "procmgmt/device_holders.h"
#include "procmgmt/kill_signal.h"

namespace gd::procmgmt {
namespace {

using Clock = std::chrono::steady_clock;

// How often exits and NVML are re-checked while waiting.
constexpr auto kPollInterval = std::chrono::milliseconds(100);
constexpr auto kNvmlPollInterval = std::chrono::milliseconds(500);

Clock::time_point deadline_after(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                            std::chrono::duration<double>(seconds));
}

bool lists(const std::vector<uint32_t>& pids, uint32_t pid) {
  return std::find(pids.begin(), pids.end(), pid) != pids.end();
}

// Waits until every pinned process has exited (or is a zombie) or the
// deadline passes; returns those still alive.
bool stopped(const KillSessionOptions& o) { return o.stop && o.stop->load(); }

std::vector<const PinnedProcess*> wait_for_exit(
    const KillSessionOptions& o, const std::vector<PinnedProcess>& pinned,
    double seconds) {
  auto deadline = deadline_after(seconds);
  while (true) {
    std::vector<const PinnedProcess*> alive;
    for (const auto& p : pinned)
      if (liveness_of(o.proc_root, p.proc()) == Liveness::kAlive)
        alive.push_back(&p);
    if (alive.empty() || Clock::now() >= deadline || stopped(o)) return alive;
    std::this_thread::sleep_for(kPollInterval);
  }
}

void send_all(std::vector<PinnedProcess>& pinned,
              const std::vector<const PinnedProcess*>& which, int sig,
              const Requester& who, KillObserver& observer) {
  for (auto& p : pinned) {
    if (std::find(which.begin(), which.end(), &p) == which.end()) continue;
    observer.on_signal(p.proc().pid, sig, p.send(sig, who));
  }
}

std::string why_still_alive(char state, int sig, bool force) {
  if (state == 'D')
    return "in uninterruptible sleep (D): stuck in a kernel call; no signal "
           "acts until it returns; check the kernel log for Xid errors";
  if (state == 'T' || state == 't')
    return "stopped: it acts on the signal only after SIGCONT (SIGKILL "
           "works: --force)";
  if (force || sig == SIGKILL)
    return "it survived SIGKILL: it is stuck in the kernel; the GPU or host "
           "needs a reset";
  return "it ignores or handles " + signal_name(sig) +
         " without exiting; add --force to send SIGKILL after the timeout";
}

// Which of the selected processes NVML listed, and on which GPUs.
std::map<uint32_t, std::vector<int>> gpu_holders(const KillPlan& plan,
                                                 const KillContext& context,
                                                 const ProcSnapshot& procs) {
  std::map<uint32_t, std::vector<int>> held;
  for (const auto& t : plan.targets)
    if (!t.gpus.empty()) held[t.proc.pid] = t.gpus;
  // Ending the holder of an orphan's device files is meant to free the
  // orphan's memory: NVML must stop listing the dead owner.
  for (const auto& t : plan.targets) {
    auto it = context.orphan_holders.find(t.proc.pid);
    if (it == context.orphan_holders.end()) continue;
    for (int gpu : it->second)
      if (auto dead = context.orphaned_pids.find(gpu);
          dead != context.orphaned_pids.end())
        for (uint32_t pid : dead->second) {
          auto& gpus = held[pid];
          if (std::find(gpus.begin(), gpus.end(), gpu) == gpus.end())
            gpus.push_back(gpu);
        }
  }
  for (const auto& z : plan.zombies)
    if (!z.gpus.empty()) held[z.proc.pid] = z.gpus;
  // Ending the parent of an unreaped GPU zombie is meant to free the
  // zombie's memory: check that too.
  for (const auto& t : plan.targets)
    for (uint32_t c : procs.children(t.proc.pid)) {
      const ProcEntry* child = procs.find(c);
      if (!child || !child->zombie()) continue;
      for (const auto& [gpu, pids] : context.gpu_pids)
        if (lists(pids, c)) held[c].push_back(gpu);
    }
  return held;
}

std::string reset_advice(int gpu, const std::vector<uint32_t>& users,
                         const GpuMemoryAccount& account, uint32_t pid) {
  // Memory kept on one MIG instance: that instance can be re-created alone.
  for (const auto& ap : account.processes)
    if (ap.pid == pid)
      if (const MigInstanceAccount* m =
              find_instance(account.mig_instances, ap.gi_id))
        return mig_instance_advice(gpu, *m);
  const std::string mig = mig_reset_clause(gpu, account.mig_instances);
  if (!users.empty()) {
    std::string pids;
    for (uint32_t p : users)
      pids += (pids.empty() ? "" : ", ") + std::to_string(p);
    return fmt::format(
        "only a GPU reset frees memory the driver kept, and a reset needs GPU "
        "{0} unused: pid(s) {1} still use it; let them finish or end them "
        "(`gpudoctor kill --gpu {0}`), then `nvidia-smi --gpu-reset -i {0}` "
        "(root){2}",
        gpu, pids, mig.empty() ? "" : "; " + mig);
  }
  return fmt::format(
      "no process holds GPU {0} any more; reset it: `nvidia-smi --gpu-reset "
      "-i {0}` (needs root and a GPU no process has open: stop "
      "nvidia-persistenced, DCGM and monitoring agents first; {1}; not "
      "supported on every model or in every VM; NVLink-connected GPUs may "
      "need to be reset together; otherwise reboot)",
      gpu, mig.empty() ? "with MIG enabled destroy the instances first" : mig);
}

// Why `pid`, which NVML still lists on `gpu` in `after`, holds memory.
HeldMemory explain_held(const KillSessionOptions& o, uint32_t pid, int gpu,
                        const TraceHeader& header, const Sample& after) {
  HeldMemory h;
  h.pid = pid;
  h.gpu = gpu;
  auto procs = ProcSnapshot::read(o.proc_root);
  auto devices = scan_device_holders(o.proc_root, o.dev_prefix);
  h.account = account_gpu_memory(header, after, gpu, procs, devices);
  for (const auto& ap : h.account.processes)
    if (ap.status == HolderStatus::kLive ||
        ap.status == HolderStatus::kUninterruptible)
      h.gpu_users.push_back(ap.pid);
  for (const auto& other : h.account.other_holders)
    h.gpu_users.push_back(other.proc.pid);
  h.next = reset_advice(gpu, h.gpu_users, h.account, pid);
  return h;
}

std::optional<uint64_t> used_on(const Sample& s, int gpu) {
  for (const auto& g : s.gpus)
    if (g.index == gpu) return g.mem_used_bytes;
  return std::nullopt;
}

// Used memory of `gpu` that no process NVML lists accounts for (the driver's
// reservation, memory of exited processes not freed yet); nullopt when a
// figure is unknown.
std::optional<uint64_t> unlisted_on(const Sample& s, int gpu) {
  for (const auto& g : s.gpus) {
    if (g.index != gpu) continue;
    if (!g.mem_used_bytes || !g.processes) return std::nullopt;
    uint64_t listed = 0;
    for (const GpuProcess& p : *g.processes) {
      if (!p.used_bytes) return std::nullopt;
      listed += *p.used_bytes;
    }
    return *g.mem_used_bytes > listed ? *g.mem_used_bytes - listed : 0;
  }
  return std::nullopt;
}

// Driver bookkeeping moves the unlisted figure by a few MiB on its own.
constexpr uint64_t kUnlistedSlackBytes = 64ull << 20;

// GPUs whose memory has not come back: the real driver drops an exited
// process from its list before it lowers the used figure, so an empty list
// alone does not prove the memory free. Comparing what no listed process
// accounts for, before and after, ignores other processes growing meanwhile.
std::vector<std::pair<int, uint64_t>> memory_not_back(
    const Sample& before, const Sample& after, const std::set<int>& gpus) {
  std::vector<std::pair<int, uint64_t>> out;
  for (int gpu : gpus) {
    auto was = unlisted_on(before, gpu), now = unlisted_on(after, gpu);
    if (was && now && *now > *was + kUnlistedSlackBytes)
      out.emplace_back(gpu, *now);
  }
  return out;
}

}  // namespace

int KillOutcome::exit_code() const {
  switch (result) {
    case KillResult::kReleased:
    case KillResult::kNoneOnGpu:
      return kKillExitReleased;
    case KillResult::kStillAlive:
      return kKillExitStillAlive;
    case KillResult::kNotReleased:
      return kKillExitNotReleased;
  }
  return kKillExitError;
}

std::map<int, std::vector<uint32_t>> nvml_gpu_pids(const Sample& s) {
  std::map<int, std::vector<uint32_t>> out;
  for (const GpuSample& g : s.gpus)
    if (g.processes)
      for (const GpuProcess& p : *g.processes) out[g.index].push_back(p.pid);
  return out;
}

void add_orphan_holders(const TraceHeader& header, const Sample& s,
                        const ProcSnapshot& procs, const std::string& proc_root,
                        const std::string& dev_prefix, KillContext& context) {
  std::optional<DeviceScan> devices;
  for (const GpuSample& g : s.gpus) {
    if (!g.processes) continue;
    if (!devices) devices = scan_device_holders(proc_root, dev_prefix);
    GpuMemoryAccount a =
        account_gpu_memory(header, s, g.index, procs, *devices);
    std::vector<uint32_t> holders = probable_holder_pids(a);
    if (holders.empty()) continue;
    for (uint32_t pid : holders) context.orphan_holders[pid].push_back(g.index);
    for (const AccountedProcess& ap : a.processes)
      if (ap.status == HolderStatus::kZombie ||
          ap.status == HolderStatus::kMissing)
        context.orphaned_pids[g.index].push_back(ap.pid);
  }
}

KillContext make_kill_context(uint32_t self_pid, const TraceHeader& header,
                              const Sample& before, const ProcSnapshot& procs,
                              const std::string& proc_root,
                              const std::string& dev_prefix) {
  KillContext context{self_pid, static_cast<uint32_t>(geteuid()),
                      nvml_gpu_pids(before)};
  add_mig_instances(before, context);
  add_orphan_holders(header, before, procs, proc_root, dev_prefix, context);
  return context;
}

void add_mig_instances(const Sample& s, KillContext& context) {
  for (const GpuSample& g : s.gpus) {
    if (g.processes)
      for (const GpuProcess& p : *g.processes)
        if (p.gi_id) context.gpu_instance[{g.index, p.pid}] = *p.gi_id;
    if (g.mig_instances)
      for (const MigInstance& m : *g.mig_instances)
        context.instance_profile[{g.index, m.gi_id}] = m.profile;
  }
}

KillOutcome run_kill_session(const KillPlan& plan, const KillContext& context,
                             const ProcSnapshot& procs, const Sample& before,
                             const TraceHeader& header,
                             const std::function<Sample()>& read_gpus,
                             const KillSessionOptions& o,
                             KillObserver& observer) {
  KillOutcome out;
  const Requester who = o.requester ? *o.requester : Requester::current();
  std::vector<PinnedProcess> pinned;
  for (const auto& t : plan.targets) pinned.emplace_back(o.proc_root, t.proc);
  std::vector<const PinnedProcess*> all;
  for (const auto& p : pinned) all.push_back(&p);
  send_all(pinned, all, o.signal, who, observer);

  auto alive = wait_for_exit(o, pinned, o.timeout_s);
  if (!alive.empty() && o.force && o.signal != SIGKILL && !stopped(o)) {
    observer.on_escalate(alive.size(), o.timeout_s);
    send_all(pinned, alive, SIGKILL, who, observer);
    alive = wait_for_exit(o, pinned, std::max(kKillWaitSeconds, o.timeout_s));
  }
  if (!alive.empty()) {
    out.result = KillResult::kStillAlive;
    for (const PinnedProcess* p : alive) {
      auto now = read_proc_entry(o.proc_root, p->proc().pid);
      char state = now ? now->state : '?';
      out.still_alive.push_back(
          {p->proc().pid, state, why_still_alive(state, o.signal, o.force)});
    }
    return out;
  }

  auto held = gpu_holders(plan, context, procs);
  // Orphaned memory that NVML lists under no pid: it is back once what no
  // listed process accounts for is a driver reservation again.
  std::set<int> unlisted_orphans;
  for (const auto& t : plan.targets)
    if (auto it = context.orphan_holders.find(t.proc.pid);
        it != context.orphan_holders.end())
      for (int gpu : it->second)
        if (!context.orphaned_pids.count(gpu)) unlisted_orphans.insert(gpu);
  if (held.empty() && unlisted_orphans.empty()) {
    out.result = KillResult::kNoneOnGpu;
    return out;
  }
  std::set<int> gpus_touched;
  for (const auto& [pid, gpus] : held)
    gpus_touched.insert(gpus.begin(), gpus.end());
  gpus_touched.insert(unlisted_orphans.begin(), unlisted_orphans.end());
  // The driver frees a context's memory shortly after its process exits;
  // NVML is re-read until the pids are gone and the memory is back, or the
  // timeout passes.
  auto deadline = deadline_after(o.timeout_s);
  Sample after;
  std::vector<std::pair<uint32_t, int>> still;  // (pid, gpu)
  std::vector<std::pair<int, uint64_t>> not_back;
  while (true) {
    after = read_gpus();
    still.clear();
    auto listed = nvml_gpu_pids(after);
    for (const auto& [pid, gpus] : held)
      for (const auto& [gpu, pids] : listed)
        if (lists(pids, pid)) still.emplace_back(pid, gpu);
    not_back = still.empty() ? memory_not_back(before, after, gpus_touched)
                             : decltype(not_back){};
    for (int gpu : unlisted_orphans)
      if (auto now = unlisted_on(after, gpu);
          now && *now > kMaxPlausibleDriverReserveBytes &&
          std::find_if(not_back.begin(), not_back.end(), [&](const auto& n) {
            return n.first == gpu;
          }) == not_back.end())
        not_back.emplace_back(gpu, *now);
    if ((still.empty() && not_back.empty()) || Clock::now() >= deadline ||
        stopped(o))
      break;
    std::this_thread::sleep_for(kNvmlPollInterval);
  }
  for (int gpu : gpus_touched)
    out.memory.push_back({gpu, used_on(before, gpu), used_on(after, gpu)});
  if (still.empty() && not_back.empty()) {
    out.result = KillResult::kReleased;
    return out;
  }
  out.result = KillResult::kNotReleased;
  for (const auto& [pid, gpu] : still)
    out.not_released.push_back(explain_held(o, pid, gpu, header, after));
  for (const auto& [gpu, unlisted] : not_back) {
    uint32_t pid = 0;  // the first of the selected processes on that GPU
    for (const auto& [p, gpus] : held)
      if (!pid && std::find(gpus.begin(), gpus.end(), gpu) != gpus.end())
        pid = p;
    for (const auto& t : plan.targets)
      if (auto it = context.orphan_holders.find(t.proc.pid);
          !pid && it != context.orphan_holders.end() &&
          std::find(it->second.begin(), it->second.end(), gpu) !=
              it->second.end())
        pid = t.proc.pid;
    HeldMemory h = explain_held(o, pid, gpu, header, after);
    h.unlisted_bytes = unlisted;
    out.not_released.push_back(std::move(h));
  }
  return out;
}

const char* kill_result_message(KillResult r) {
  switch (r) {
    case KillResult::kReleased:
      return "GPU memory released.";
    case KillResult::kNoneOnGpu:
      return "All selected processes have exited; none of them was listed on "
             "a GPU.";
    case KillResult::kStillAlive:
      return "Some processes are still alive.";
    case KillResult::kNotReleased:
      return "GPU memory NOT released.";
  }
  return "";
}

}  // namespace gd::procmgmt
