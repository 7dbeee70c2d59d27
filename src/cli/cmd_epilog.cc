// gpudoctor epilog --job ID [--gpus LIST] [--grace SECONDS]
//   [--memory-timeout SECONDS] [--json] [--reason]
// For a Slurm epilog (deploy/slurm/epilog.sh): ends what job ID left behind
// (procmgmt/epilog.h says what counts) with `gpudoctor kill`'s session
// (SIGTERM, --grace, SIGKILL), then waits up to --memory-timeout for each of
// the job's GPUs to get its memory back. Exit 0: nothing left, or ended and
// memory back; 1: could not run (NVML); 2: memory not back; 64: usage.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <thread>

#include "cli/commands.h"
#include "cli/flag_checks.h"
#include "collect/sampler.h"
#include "common/slurm_job_id.h"
#include "model/gpu_lookup.h"
#include "procmgmt/device_holders.h"
#include "procmgmt/epilog.h"
#include "procmgmt/kill_session.h"
#include "procmgmt/proc_snapshot.h"
#include "slurm/job_names.h"
#include "views/epilog_view.h"
#include "views/kill_view.h"
#include "views/status_view.h"

namespace gd {
namespace {

using namespace procmgmt;

constexpr DurationRange kGraceRange{0, 3600};
constexpr DurationRange kMemoryRange{0, 3600};
// How often NVML is read while waiting for the memory.
constexpr std::chrono::milliseconds kPoll{200};

struct EpilogFlags {
  std::string job, gpus;
  double grace_s = 10, memory_timeout_s = 30;
  bool json = false, reason = false;
};

class KeepingObserver : public KillObserver {
 public:
  void on_signal(uint32_t pid, int sig, const std::string& error) override {
    steps.push_back(render_signal_sent(pid, sig, error));
  }
  void on_escalate(size_t alive, double timeout_s) override {
    steps.push_back(render_escalation(alive, timeout_s));
  }
  std::vector<std::string> steps;
};

// "0,2", "GPU-...,1" or "/dev/nvidia3" -> indexes; "" = every GPU of the
// header. Sets `error` on a name the header does not have.
std::vector<int> resolve_gpus(const TraceHeader& h, const std::string& list,
                              std::string& error) {
  std::vector<int> out;
  if (list.empty()) {
    for (const GpuInfo& g : h.gpus) out.push_back(g.index);
    return out;
  }
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, ',')) {
    std::optional<int> found = gpu_by_name(h, item);
    if (!found) {
      error = "--gpus: no GPU '" + item.substr(0, 64) + "' on this node";
      return {};
    }
    out.push_back(*found);
  }
  return out;
}

int run_epilog(const GlobalOptions& g, const EpilogFlags& f) {
  if (!is_slurm_job_id(f.job)) {
    std::fprintf(stderr,
                 "gpudoctor: epilog: --job '%.32s': not a Slurm job id "
                 "(1..10 digits)\n",
                 f.job.c_str());
    return kEpilogExitUsage;
  }
  SamplerOptions so = g.sampler_options();
  so.scontrol.clear();  // names are not needed here, the start time is
  Sampler sampler(so);
  const TraceHeader& header = sampler.header();
  if (header.nvml_status != kNvmlOk) {
    std::fprintf(stderr, "gpudoctor: epilog: cannot read GPU memory: %s\n",
                 explain_nvml_status(header).c_str());
    return kEpilogExitError;
  }
  std::string error;
  EpilogRequest req{f.job, resolve_gpus(header, f.gpus, error), std::nullopt,
                    static_cast<uint32_t>(getpid())};
  if (!error.empty()) {
    std::fprintf(stderr, "gpudoctor: epilog: %s\n", error.c_str());
    return kEpilogExitUsage;
  }
  if (auto job = slurm::ask_scontrol(slurm::scontrol_path_from_env(), f.job,
                                     slurm::JobNames::kDeadline))
    req.job_start = job->start_time;

  auto procs = ProcSnapshot::read(g.proc_root);
  auto devices = scan_device_holders(g.proc_root, g.dev_prefix);
  EpilogReport report;
  report.job_id = f.job;
  report.selection = select_epilog_leftovers(
      req, procs, devices,
      [&](uint32_t pid) { return environ_slurm_job_id(g.proc_root, pid); });

  Sample before = sampler.sample();
  KeepingObserver observer;
  if (!report.selection.leftovers.empty()) {
    KillContext ctx = make_kill_context(req.self_pid, header, before, procs,
                                        g.proc_root, g.dev_prefix);
    KillRequest kr;
    kr.any = true;
    for (const auto& p : report.selection.leftovers)
      kr.pids.push_back(p.proc.pid);
    KillPlan plan = plan_kill(kr, ctx, procs);
    // `kill` sends nothing when any pid is refused; the epilog ends the
    // others and says why it left those.
    if (!plan.refusals.empty()) {
      for (const auto& r : plan.refusals) {
        std::erase(kr.pids, r.pid);
        observer.steps.push_back("not ending pid " + std::to_string(r.pid) +
                                 ": " + r.reason + "\n");
      }
      plan = plan_kill(kr, ctx, procs);
    }
    if (plan.refusals.empty() && !plan.targets.empty()) {
      KillSessionOptions opts{g.proc_root, g.dev_prefix, SIGTERM, f.grace_s,
                              /*force=*/true};
      run_kill_session(
          plan, ctx, procs, before, header,
          [&sampler] { return sampler.sample(); }, opts, observer);
    }
  }
  report.kill_steps = std::move(observer.steps);

  std::vector<uint32_t> other_jobs;
  for (const auto& p : report.selection.spared)
    if (p.why.starts_with("job ")) other_jobs.push_back(p.proc.pid);
  const auto until = std::chrono::steady_clock::now() +
                     std::chrono::milliseconds(
                         static_cast<int64_t>(f.memory_timeout_s * 1000));
  for (;;) {
    Sample s = sampler.sample();
    report.gpus.clear();
    report.memory_back = true;
    for (int gpu : req.gpus) {
      report.gpus.push_back(judge_epilog_gpu(s, gpu, other_jobs, g.proc_root));
      report.memory_back = report.memory_back && report.gpus.back().back;
    }
    if (report.memory_back || std::chrono::steady_clock::now() >= until) break;
    std::this_thread::sleep_for(kPoll);
  }
  for (const auto& gpu : report.gpus)
    if (!gpu.back) {
      report.reason = epilog_reason(f.job, gpu);
      break;
    }
  if (f.reason) {
    if (!report.reason.empty()) std::cout << report.reason << "\n";
  } else if (f.json) {
    std::cout << epilog_to_json(report) << "\n";
  } else {
    std::cout << render_epilog(report);
  }
  return report.memory_back ? kEpilogExitClean : kEpilogExitNotBack;
}

}  // namespace

void add_epilog_command(CLI::App& app, const GlobalOptions& global) {
  auto* cmd = app.add_subcommand(
      "epilog",
      "for a Slurm epilog: end what job ID left behind (its cgroup, its "
      "SLURM_JOB_ID, holders of its GPUs started during it) and wait for "
      "its GPUs' memory\n"
      "exit codes: 0 nothing left or ended and memory back, 1 error, 2 "
      "memory not back, 64 usage");
  set_usage_exit_code("epilog", kExitUsageForScripts);
  auto f = std::make_shared<EpilogFlags>();
  cmd->add_option("--job", f->job, "the Slurm job id")->required();
  cmd->add_option("--gpus", f->gpus,
                  "the job's GPUs: indexes, UUIDs or device files "
                  "(/dev/nvidiaN), comma-separated (default: every GPU)");
  add_duration_option(*cmd, "--grace", f->grace_s, kGraceRange,
                      "wait after SIGTERM before SIGKILL (default 10s)");
  add_duration_option(*cmd, "--memory-timeout", f->memory_timeout_s,
                      kMemoryRange,
                      "wait for the GPUs' memory to come back (default 30s)");
  cmd->add_flag("--json", f->json, "print JSON");
  cmd->add_flag("--reason", f->reason,
                "print only one line naming what is wrong (for a drain "
                "reason), or nothing");
  cmd->callback([&global, f] {
    try {
      command_exit_code() = run_epilog(global, *f);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gpudoctor: epilog: %s\n", e.what());
      command_exit_code() = kEpilogExitError;
    }
  });
}

GD_REGISTER_NAMED_COMMAND(46, "epilog", add_epilog_command);

}  // namespace gd
