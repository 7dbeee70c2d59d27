#include "views/kill_view.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/terminal_text.h"
#include "model/pod_label.h"
#include "model/slurm_label.h"
#include "procmgmt/kill_signal.h"
#include "views/format.h"

namespace gd {

using namespace procmgmt;

namespace {

std::optional<uint64_t> used_by(const Sample& s, uint32_t pid) {
  std::optional<uint64_t> sum;
  for (const GpuSample& g : s.gpus)
    if (g.processes)
      for (const GpuProcess& p : *g.processes)
        if (p.pid == pid && p.used_bytes) sum = sum.value_or(0) + *p.used_bytes;
  return sum;
}

const ProcessSample* sampled(const Sample& s, uint32_t pid) {
  for (const ProcessSample& p : s.processes)
    if (p.pid == pid) return &p;
  return nullptr;
}

std::string render_held(const HeldMemory& h) {
  std::string out;
  if (h.unlisted_bytes)
    out += fmt::format(
        "  NVML no longer lists the ended processes on GPU {}, but {} of its "
        "used memory belongs to no listed process: the driver has not freed "
        "it\n",
        h.gpu, human_bytes(*h.unlisted_bytes));
  for (const auto& ap : h.account.processes) {
    if (ap.pid != h.pid) continue;
    if (ap.status == HolderStatus::kMissing)
      out += fmt::format(
          "  pid {} has exited but NVML still lists it on GPU {} with {}: the "
          "driver has not freed its memory\n",
          h.pid, h.gpu, ap.used_bytes ? human_bytes(*ap.used_bytes) : "n/a");
    else
      out += fmt::format("  pid {} on GPU {}: {}\n", h.pid, h.gpu,
                         terminal_safe(ap.explanation, kTerminalSentenceMax));
    if (!ap.action.empty() && ap.status != HolderStatus::kMissing)
      out +=
          "    next: " + terminal_safe(ap.action, kTerminalSentenceMax) + "\n";
  }
  for (const auto& o : h.account.other_holders)
    out += fmt::format(
        "  pid {} ({}, {}) still has NVIDIA device files open{}\n", o.proc.pid,
        terminal_fit(o.proc.user, 32), terminal_fit(o.proc.command(), 50),
        o.proc.uninterruptible() ? " and is stuck in D state" : "");
  out += "    next: " + terminal_safe(h.next, kTerminalSentenceMax) + "\n";
  return out;
}

}  // namespace

std::string render_kill_plan(const KillPlan& plan, const Sample& s,
                             const std::string& sig, bool force,
                             double timeout_s) {
  std::string out;
  bool in_live_pod = false;
  if (!plan.targets.empty()) {
    out += fmt::format(
        "Will send {} to {} process(es){}:\n", sig, plan.targets.size(),
        force ? fmt::format(", then SIGKILL to those still alive after {}",
                            elapsed_compact(timeout_s))
              : "");
    out += fmt::format("  {:<8} {:<10} {:<5} {:<36} {:>10}  {}\n", "PID",
                       "USER", "STATE", "ROLE", "GPU-MEM", "COMMAND");
    for (const auto& t : plan.targets) {
      auto mem = used_by(s, t.proc.pid);
      out += fmt::format(
          "  {:<8} {:<10} {:<5} {:<36} {:>10}  {}\n", t.proc.pid,
          terminal_cell(t.proc.user, 10), std::string(1, t.proc.state),
          terminal_cell(t.role, 36), mem ? human_bytes(*mem) : "-",
          terminal_fit(t.proc.command(), 60));
      // Its Slurm job: the sample's (cgroup or environment), else the
      // cgroup's as /proc shows it now.
      const ProcessSample* p = sampled(s, t.proc.pid);
      std::optional<std::string> job = t.proc.slurm_job_id;
      if (p && p->slurm_job_id) job = p->slurm_job_id;
      if (job)
        out += "           job: " + terminal_fit(slurm_job_label(s, *job), 60) +
               "\n";
      if (p && p->pod) {
        out += "           pod: " + terminal_fit(pod_label(*p->pod), 60) + "\n";
        if (!p->pod->deleted.value_or(false)) in_live_pod = true;
      }
    }
    // Ending a pod's process does not end the pod: its container restarts.
    if (in_live_pod)
      out +=
          "  note: the kubelet restarts a pod's container when its process "
          "ends (unless the pod's restartPolicy is Never); to stop the "
          "workload, delete the pod or scale down what created it (kubectl "
          "delete pod -n NAMESPACE NAME)\n";
  }
  for (const auto& z : plan.zombies)
    out += fmt::format(
        "  {} is already a zombie: nothing to send; its memory is freed when "
        "its parent {} reaps it\n",
        z.proc.pid, z.proc.ppid);
  for (const auto& n : plan.notes)
    out += "  note: " + terminal_safe(n, kTerminalSentenceMax) + "\n";
  return out;
}

std::string render_gone_owners_advice(
    const std::vector<GpuMemoryAccount>& accounts) {
  std::vector<std::string> lines;
  for (const GpuMemoryAccount& a : accounts)
    for (const std::string& s : a.advice)
      if (std::find(lines.begin(), lines.end(), s) == lines.end())
        lines.push_back(s);
  if (lines.empty()) return "";
  std::string out = "What to do (as `gpudoctor who` says):\n";
  for (const std::string& s : lines)
    out += "  - " + terminal_safe(s, kTerminalSentenceMax) + "\n";
  return out;
}

std::string render_kill_refusals(const KillPlan& plan,
                                 const ProcSnapshot& procs) {
  std::string out = "Refused, nothing was sent:\n";
  for (const auto& r : plan.refusals) {
    const ProcEntry* p = procs.find(r.pid);
    out += fmt::format("  {} ({}): {}\n", r.pid,
                       p ? terminal_fit(p->command(), 40) : std::string("?"),
                       terminal_safe(r.reason, kTerminalSentenceMax));
  }
  return out;
}

std::string render_signal_sent(uint32_t pid, int sig,
                               const std::string& error) {
  if (error.empty())
    return fmt::format("sent {} to {}\n", signal_name(sig), pid);
  return fmt::format("could not send {} to {}: {}\n", signal_name(sig), pid,
                     error);
}

std::string render_escalation(size_t alive, double timeout_s) {
  return fmt::format("{} process(es) still alive after {}: sending SIGKILL\n",
                     alive, elapsed_compact(timeout_s));
}

std::string render_kill_outcome(const KillOutcome& o) {
  std::string out;
  switch (o.result) {
    case KillResult::kStillAlive:
      out += "Still alive:\n";
      for (const auto& p : o.still_alive)
        out += fmt::format("  {} ({}): {}\n", p.pid, describe_state(p.state),
                           p.why);
      return out;
    case KillResult::kNoneOnGpu:
      return "All selected processes have exited; none of them was listed on "
             "a GPU.\n";
    case KillResult::kReleased:
    case KillResult::kNotReleased:
      break;
  }
  for (const auto& m : o.memory)
    out += fmt::format("GPU {}: used {} before, {} now\n", m.gpu,
                       m.before ? human_bytes(*m.before) : "n/a",
                       m.after ? human_bytes(*m.after) : "n/a");
  if (o.result == KillResult::kReleased) return out + "GPU memory released.\n";
  out += "GPU memory NOT released:\n";
  for (const auto& h : o.not_released) out += render_held(h);
  return out;
}

}  // namespace gd
