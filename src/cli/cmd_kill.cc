// gpudoctor kill PID...|--gpu N [--user U] [--signal TERM] [--timeout 10s]
//                [--force] [--dry-run] [--yes] [--tree] [--any]
// Frees GPU memory by ending its holders, safely: shows the plan and asks,
// never signals PID 1, kernel threads, itself or its ancestors, unrelated
// processes (unless --any) or other users' processes (unless root); logs
// every signal to syslog; then checks that NVML released the memory and
// says why not if it did not.
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <set>
#include <thread>

#include "cli/commands.h"
#include "cli/flag_checks.h"
#include "views/format.h"
#include "views/status_view.h"
#include "collect/sampler.h"
#include "common/terminal_text.h"
#include "procmgmt/device_holders.h"
#include "procmgmt/gpu_memory_account.h"
#include "procmgmt/kill_plan.h"
#include "procmgmt/kill_signal.h"
#include "procmgmt/proc_snapshot.h"

namespace gd {
namespace {

using namespace procmgmt;
using Clock = std::chrono::steady_clock;

// How often exits and NVML are re-checked while waiting.
constexpr auto kPollInterval = std::chrono::milliseconds(100);
constexpr auto kNvmlPollInterval = std::chrono::milliseconds(500);
// After SIGKILL a process ends as soon as it leaves the kernel; this long
// is enough unless it is stuck (D state), which is reported.
constexpr double kKillWaitSeconds = 5;
// --timeout: 0 checks once without waiting; past an hour a stuck process
// needs a person, not a longer wait.
constexpr DurationRange kTimeoutRange{0, 3600};

struct KillFlags {
  std::vector<uint32_t> pids;
  std::optional<int> gpu;
  std::string user;
  std::string signal = "TERM";
  double timeout_s = 10;
  bool force = false, dry_run = false, yes = false, tree = false, any = false;
  std::string dev_prefix = "/dev";
};

std::map<int, std::vector<uint32_t>> gpu_pids_of(const Sample& s) {
  std::map<int, std::vector<uint32_t>> out;
  for (const GpuSample& g : s.gpus)
    if (g.processes)
      for (const GpuProcess& p : *g.processes) out[g.index].push_back(p.pid);
  return out;
}

std::optional<uint64_t> used_by(const Sample& s, uint32_t pid) {
  std::optional<uint64_t> sum;
  for (const GpuSample& g : s.gpus)
    if (g.processes)
      for (const GpuProcess& p : *g.processes)
        if (p.pid == pid && p.used_bytes) sum = sum.value_or(0) + *p.used_bytes;
  return sum;
}

void print_plan(const KillPlan& plan, const Sample& s, const std::string& sig,
                const KillFlags& f) {
  if (!plan.targets.empty()) {
    std::cout << fmt::format(
        "Will send {} to {} process(es){}:\n", sig, plan.targets.size(),
        f.force ? fmt::format(", then SIGKILL to those still alive after {}",
                              human_elapsed(f.timeout_s))
                : "");
    std::cout << fmt::format("  {:<8} {:<10} {:<5} {:<36} {:>10}  {}\n", "PID",
                             "USER", "STATE", "ROLE", "GPU-MEM", "COMMAND");
    for (const auto& t : plan.targets) {
      auto mem = used_by(s, t.proc.pid);
      std::cout << fmt::format(
          "  {:<8} {:<10} {:<5} {:<36} {:>10}  {}\n", t.proc.pid,
          terminal_cell(t.proc.user, 10), std::string(1, t.proc.state),
          terminal_cell(t.role, 36), mem ? human_bytes(*mem) : "-",
          ellipsize(t.proc.command(), 60));
    }
  }
  for (const auto& z : plan.zombies)
    std::cout << fmt::format(
        "  {} is already a zombie: nothing to send; its memory is freed when "
        "its parent {} "
        "reaps it\n",
        z.proc.pid, z.proc.ppid);
  for (const auto& n : plan.notes)
    std::cout << "  note: " << terminal_safe(n, kTerminalSentenceMax) << "\n";
}

// Waits until every pinned process has exited (or is a zombie) or the
// deadline passes; returns those still alive.
std::vector<const PinnedProcess*> wait_for_exit(
    const std::string& proc_root, const std::vector<PinnedProcess>& pinned,
    double seconds) {
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(seconds));
  while (true) {
    std::vector<const PinnedProcess*> alive;
    for (const auto& p : pinned)
      if (liveness_of(proc_root, p.proc()) == Liveness::kAlive)
        alive.push_back(&p);
    if (alive.empty() || Clock::now() >= deadline) return alive;
    std::this_thread::sleep_for(kPollInterval);
  }
}

int send_all(std::vector<PinnedProcess>& pinned,
             const std::vector<const PinnedProcess*>& which, int sig,
             const Requester& who) {
  int sent = 0;
  for (auto& p : pinned) {
    if (std::find(which.begin(), which.end(), &p) == which.end()) continue;
    std::string err = p.send(sig, who);
    if (err.empty()) {
      ++sent;
      std::cout << fmt::format("sent {} to {}\n", signal_name(sig),
                               p.proc().pid);
    } else {
      std::cout << fmt::format("could not send {} to {}: {}\n",
                               signal_name(sig), p.proc().pid, err);
    }
  }
  return sent;
}

// Explains why `pid`, which NVML still lists on `gpu`, holds memory.
std::string why_not_released(const GlobalOptions& g, const KillFlags& f,
                             uint32_t pid, int gpu, const TraceHeader& header,
                             const Sample& s) {
  auto procs = ProcSnapshot::read(g.proc_root);
  auto devices = scan_device_holders(g.proc_root, f.dev_prefix);
  GpuMemoryAccount a = account_gpu_memory(header, s, gpu, procs, devices);
  std::string out;
  for (const auto& ap : a.processes) {
    if (ap.pid != pid) continue;
    if (ap.status == HolderStatus::kMissing)
      out += fmt::format(
          "  pid {} has exited but NVML still lists it on GPU {} with {}: the "
          "driver has not "
          "freed its memory\n",
          pid, gpu, ap.used_bytes ? human_bytes(*ap.used_bytes) : "n/a");
    else
      out += fmt::format("  pid {} on GPU {}: {}\n", pid, gpu,
                         terminal_safe(ap.explanation, kTerminalSentenceMax));
    if (!ap.action.empty() && ap.status != HolderStatus::kMissing)
      out +=
          "    next: " + terminal_safe(ap.action, kTerminalSentenceMax) + "\n";
  }
  for (const auto& o : a.other_holders)
    out += fmt::format(
        "  pid {} ({}, {}) still has NVIDIA device files open{}\n", o.proc.pid,
        ellipsize(o.proc.user, 32), ellipsize(o.proc.command(), 50),
        o.proc.uninterruptible() ? " and is stuck in D state" : "");
  std::string live;
  for (const auto& ap : a.processes)
    if (ap.status == HolderStatus::kLive ||
        ap.status == HolderStatus::kUninterruptible)
      live += (live.empty() ? "" : ", ") + std::to_string(ap.pid);
  for (const auto& o : a.other_holders)
    live += (live.empty() ? "" : ", ") + std::to_string(o.proc.pid);
  if (!live.empty())
    out += fmt::format(
        "    next: only a GPU reset frees memory the driver kept, and a reset "
        "needs GPU {0} "
        "unused: pid(s) {1} still use it; let them finish or end them "
        "(`gpudoctor kill "
        "--gpu {0}`), then `nvidia-smi --gpu-reset -i {0}` (root)\n",
        gpu, live);
  else
    out += fmt::format(
        "    next: no process holds GPU {0} any more; reset it: `nvidia-smi "
        "--gpu-reset -i {0}` "
        "(needs root and a GPU no process has open: stop nvidia-persistenced, "
        "DCGM and "
        "monitoring agents first; with MIG enabled destroy the instances "
        "first; not supported "
        "on every model or in every VM; NVLink-connected GPUs may need to be "
        "reset together; "
        "otherwise reboot)\n",
        gpu);
  return out;
}

int run_kill(const GlobalOptions& g, const KillFlags& f) {
  auto sig = parse_signal(f.signal);
  if (!sig) {
    std::fprintf(stderr, "gpudoctor: kill: --signal %s: unknown signal name\n",
                 f.signal.c_str());
    return kKillExitUsage;
  }
  if (f.pids.empty() && !f.gpu) {
    std::fprintf(stderr,
                 "gpudoctor: kill: name the PIDs or --gpu N (see --help)\n");
    return kKillExitUsage;
  }
  Sampler sampler(g.sampler_options());
  const TraceHeader& header = sampler.header();
  if (header.nvml_status != kNvmlOk)
    std::cout << "!! " << explain_nvml_status(header)
              << ": no process counts as a GPU process (use --any to proceed "
                 "anyway)\n";
  Sample before = sampler.sample();

  KillRequest req{f.pids, f.gpu, f.user, f.tree, f.any};
  KillContext ctx{static_cast<uint32_t>(getpid()),
                  static_cast<uint32_t>(geteuid()), gpu_pids_of(before)};
  auto procs = ProcSnapshot::read(g.proc_root);
  KillPlan plan = plan_kill(req, ctx, procs);

  for (uint32_t pid : plan.not_found)
    std::fprintf(stderr, "gpudoctor: kill: pid %u: no such process\n", pid);
  if (!plan.not_found.empty()) return kKillExitError;

  print_plan(plan, before, signal_name(*sig), f);
  if (!plan.refusals.empty()) {
    std::cout << "Refused, nothing was sent:\n";
    for (const auto& r : plan.refusals) {
      const ProcEntry* p = procs.find(r.pid);
      std::cout << fmt::format(
          "  {} ({}): {}\n", r.pid,
          p ? ellipsize(p->command(), 40) : std::string("?"),
          terminal_safe(r.reason, kTerminalSentenceMax));
    }
    return kKillExitRefused;
  }
  if (plan.targets.empty() && plan.zombies.empty()) {
    std::cout << "Nothing to signal.\n";
    return plan.notes.empty() ? kKillExitReleased : kKillExitNotReleased;
  }
  if (f.dry_run) {
    std::cout << "Dry run: nothing was sent.\n";
    return kKillExitReleased;
  }
  if (!f.yes && !plan.targets.empty()) {
    if (!isatty(STDIN_FILENO)) {
      std::fprintf(stderr,
                   "gpudoctor: kill: refusing: stdin is not a terminal and "
                   "--yes was not given\n");
      return kKillExitRefused;
    }
    std::cout << "Proceed? [y/N] " << std::flush;
    std::string answer;
    std::getline(std::cin, answer);
    if (answer != "y" && answer != "Y" && answer != "yes") {
      std::cout << "Nothing was sent.\n";
      return kKillExitRefused;
    }
  }

  Requester who = Requester::current();
  std::vector<PinnedProcess> pinned;
  for (const auto& t : plan.targets) pinned.emplace_back(g.proc_root, t.proc);
  std::vector<const PinnedProcess*> all;
  for (const auto& p : pinned) all.push_back(&p);
  send_all(pinned, all, *sig, who);

  auto alive = wait_for_exit(g.proc_root, pinned, f.timeout_s);
  if (!alive.empty() && f.force && *sig != SIGKILL) {
    std::cout << fmt::format(
        "{} process(es) still alive after {}: sending SIGKILL\n", alive.size(),
        human_elapsed(f.timeout_s));
    send_all(pinned, alive, SIGKILL, who);
    alive = wait_for_exit(g.proc_root, pinned,
                          std::max(kKillWaitSeconds, f.timeout_s));
  }
  if (!alive.empty()) {
    std::cout << "Still alive:\n";
    for (const PinnedProcess* p : alive) {
      auto now = read_proc_entry(g.proc_root, p->proc().pid);
      char state = now ? now->state : '?';
      std::string why =
          state == 'D' ? "in uninterruptible sleep (D): stuck in a kernel "
                         "call; no signal acts "
                         "until it returns; check the kernel log for Xid errors"
          : state == 'T' || state == 't'
              ? "stopped: it acts on the signal only after SIGCONT (SIGKILL "
                "works: --force)"
          : f.force || *sig == SIGKILL
              ? "it survived SIGKILL: it is stuck in the kernel; the GPU or "
                "host needs a reset"
              : "it ignores or handles " + signal_name(*sig) +
                    " without exiting; add --force to send SIGKILL after the "
                    "timeout";
      std::cout << fmt::format("  {} ({}): {}\n", p->proc().pid,
                               describe_state(state), why);
    }
    return kKillExitStillAlive;
  }

  // Which of the selected processes held GPU memory, and on which GPUs.
  std::map<uint32_t, std::vector<int>> held;
  for (const auto& t : plan.targets)
    if (!t.gpus.empty()) held[t.proc.pid] = t.gpus;
  for (const auto& z : plan.zombies)
    if (!z.gpus.empty()) held[z.proc.pid] = z.gpus;
  // Ending the parent of an unreaped GPU zombie is meant to free the
  // zombie's memory: check that too.
  for (const auto& t : plan.targets)
    for (uint32_t c : procs.children(t.proc.pid)) {
      const ProcEntry* child = procs.find(c);
      if (!child || !child->zombie()) continue;
      for (const auto& [gpu, pids] : ctx.gpu_pids)
        if (std::find(pids.begin(), pids.end(), c) != pids.end())
          held[c].push_back(gpu);
    }
  if (held.empty()) {
    std::cout << "All selected processes have exited; none of them was listed "
                 "on a GPU.\n";
    return kKillExitReleased;
  }
  // The driver frees a context's memory shortly after its process exits;
  // NVML is re-read until the pids are gone or the timeout passes.
  auto deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(f.timeout_s));
  Sample after;
  std::vector<std::pair<uint32_t, int>> still;  // (pid, gpu)
  while (true) {
    after = sampler.sample();
    still.clear();
    auto listed = gpu_pids_of(after);
    for (const auto& [pid, gpus] : held)
      for (const auto& [gpu, pids] : listed)
        if (std::find(pids.begin(), pids.end(), pid) != pids.end())
          still.emplace_back(pid, gpu);
    if (still.empty() || Clock::now() >= deadline) break;
    std::this_thread::sleep_for(kNvmlPollInterval);
  }
  std::set<int> gpus_touched;
  for (const auto& [pid, gpus] : held)
    gpus_touched.insert(gpus.begin(), gpus.end());
  for (int gpu : gpus_touched) {
    std::optional<uint64_t> b, a;
    for (const auto& gs : before.gpus)
      if (gs.index == gpu) b = gs.mem_used_bytes;
    for (const auto& gs : after.gpus)
      if (gs.index == gpu) a = gs.mem_used_bytes;
    std::cout << fmt::format("GPU {}: used {} before, {} now\n", gpu,
                             b ? human_bytes(*b) : "n/a",
                             a ? human_bytes(*a) : "n/a");
  }
  if (still.empty()) {
    std::cout << "GPU memory released.\n";
    return kKillExitReleased;
  }
  std::cout << "GPU memory NOT released:\n";
  for (const auto& [pid, gpu] : still)
    std::cout << why_not_released(g, f, pid, gpu, header, after);
  return kKillExitNotReleased;
}

}  // namespace

void add_kill_command(CLI::App& app, const GlobalOptions& global) {
  auto* cmd = app.add_subcommand("kill",
                                 "end the processes holding GPU memory, "
                                 "safely, and check the memory was freed\n"
                                 "exit codes: 0 killed and memory released, 1 "
                                 "error, 2 usage, 3 refused (safety "
                                 "rule, declined, or no --yes without a "
                                 "terminal), 4 processes gone but memory not "
                                 "released, 5 processes still alive");
  auto f = std::make_shared<KillFlags>();
  cmd->add_option("pids", f->pids, "processes to end (decimal pids)")
      ->transform(decimal_in(1, kMaxPid));
  cmd->add_option("--gpu", f->gpu, "every process NVML lists on this GPU")
      ->transform(decimal_in(0, kMaxGpuIndex));
  cmd->add_option("--user", f->user,
                  "only processes of this user (name or uid)");
  cmd->add_option("--signal,-s", f->signal,
                  "signal to send first (default TERM)");
  add_duration_option(*cmd, "--timeout", f->timeout_s, kTimeoutRange,
                      "how long to wait for exits and for the memory to be "
                      "freed (default 10s)");
  cmd->add_flag("--force", f->force,
                "send SIGKILL to processes still alive after the timeout");
  cmd->add_flag("--dry-run,-n", f->dry_run,
                "show what would be signalled; send nothing");
  cmd->add_flag("--yes,-y", f->yes,
                "do not ask (required when stdin is not a terminal)");
  cmd->add_flag("--tree", f->tree,
                "end the whole job: its launcher (torchrun, mpirun, ...), "
                "ranks and workers");
  cmd->add_flag("--any", f->any,
                "allow processes that are not GPU processes nor their workers");
  cmd->add_option("--dev-prefix", f->dev_prefix,
                  "directory of the NVIDIA device nodes (tests)")
      ->group("");
  cmd->callback([&global, f] {
    try {
      command_exit_code() = run_kill(global, *f);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gpudoctor: kill: %s\n", e.what());
      command_exit_code() = kKillExitError;
    }
  });
}

GD_REGISTER_COMMAND(45, add_kill_command);

}  // namespace gd
