// gpudoctor kill PID...|--gpu LIST [--mig GI] [--user U] [--signal TERM]
// [--timeout 10s]
//                [--force] [--dry-run] [--yes] [--tree] [--any] [--json]
// Frees GPU memory by ending its holders, safely: shows the plan and asks,
// never signals PID 1, kernel threads, itself or its ancestors, unrelated
// processes (unless --any) or other users' processes (unless root); logs
// every signal to syslog; then checks that NVML released the memory and
// says why not if it did not.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>

#include "api/kill_json.h"
#include "cli/commands.h"
#include "cli/flag_checks.h"
#include "collect/sampler.h"
#include "common/terminal_text.h"
#include "procmgmt/device_holders.h"
#include "procmgmt/gpu_memory_account.h"
#include "procmgmt/kill_plan.h"
#include "procmgmt/kill_session.h"
#include "procmgmt/kill_signal.h"
#include "procmgmt/proc_snapshot.h"
#include "views/kill_view.h"
#include "views/status_view.h"

namespace gd {
namespace {

using namespace procmgmt;

// --timeout: 0 checks once without waiting; past an hour a stuck process
// needs a person, not a longer wait.
constexpr DurationRange kTimeoutRange{0, 3600};

struct KillFlags {
  std::vector<uint32_t> pids;
  std::vector<std::string> gpu_names;  // --gpu as given: indices, UUIDs...
  GpuSelection gpus;            // their indices, once the host's are known
  std::optional<uint32_t> mig;  // a MIG GPU instance of --gpu
  std::string user;
  std::string signal = "TERM";
  double timeout_s = 10;
  bool force = false, dry_run = false, yes = false, tree = false, any = false;
  bool json = false;
};

// Prints each step of the kill session as it happens (text), and keeps it
// for --json.
class PrintingObserver : public KillObserver {
 public:
  explicit PrintingObserver(bool print) : print_(print) {}
  void on_signal(uint32_t pid, int sig, const std::string& error) override {
    if (print_) std::cout << render_signal_sent(pid, sig, error);
    steps.push_back({false, pid, sig, error, 0, 0});
  }
  void on_escalate(size_t alive, double timeout_s) override {
    if (print_) std::cout << render_escalation(alive, timeout_s);
    steps.push_back({true, 0, 0, "", alive, timeout_s});
  }
  std::vector<KillStep> steps;

 private:
  bool print_;
};

// --json: the object serve's POST /api/v1/kill answers (api/kill_json.h),
// printed once at the end whatever happened.
api::KillApiReply json_reply(const KillFlags& f, int sig, const KillPlan& plan,
                             const Sample& before, const ProcSnapshot& procs) {
  api::KillApiReply r;
  r.dry_run = f.dry_run;
  r.signal = sig;
  r.timeout_s = f.timeout_s;
  r.force = f.force;
  r.plan = plan;
  r.plan_id = api::kill_plan_id(plan);
  for (const auto* list : {&plan.targets, &plan.zombies})
    for (const auto& t : *list)
      for (const GpuSample& g : before.gpus)
        if (g.processes)
          for (const GpuProcess& p : *g.processes)
            if (p.pid == t.proc.pid && p.used_bytes)
              r.gpu_memory[p.pid] += *p.used_bytes;
  for (const auto& x : plan.refusals)
    if (const ProcEntry* p = procs.find(x.pid))
      r.refused_commands[x.pid] = p->command();
  return r;
}

// Asks on the terminal; false when declined or stdin is not a terminal.
bool confirmed() {
  if (!isatty(STDIN_FILENO)) {
    std::fprintf(stderr,
                 "gpudoctor: kill: refusing: stdin is not a terminal and "
                 "--yes was not given\n");
    return false;
  }
  std::cout << "Proceed? [y/N] " << std::flush;
  std::string answer;
  std::getline(std::cin, answer);
  if (answer != "y" && answer != "Y" && answer != "yes") {
    std::cout << "Nothing was sent.\n";
    return false;
  }
  return true;
}

// The memory accounts (`who`) of --gpu, or of the GPUs NVML lists the
// given pids on.
std::vector<GpuMemoryAccount> gone_owners_accounts(const KillFlags& f,
                                                   const TraceHeader& header,
                                                   const Sample& s,
                                                   const ProcSnapshot& procs,
                                                   const GlobalOptions& g) {
  const DeviceScan devices = scan_device_holders(g.proc_root, g.dev_prefix);
  std::vector<GpuMemoryAccount> out;
  for (const GpuSample& gs : s.gpus) {
    bool concerned =
        std::find(f.gpus.begin(), f.gpus.end(), gs.index) != f.gpus.end();
    if (gs.processes)
      for (const GpuProcess& gp : *gs.processes)
        concerned |=
            std::find(f.pids.begin(), f.pids.end(), gp.pid) != f.pids.end();
    if (concerned)
      out.push_back(account_gpu_memory(header, s, gs.index, procs, devices));
  }
  return out;
}

int run_kill(const GlobalOptions& g, KillFlags f) {
  auto sig = parse_signal(f.signal);
  if (!sig) {
    std::fprintf(stderr, "gpudoctor: kill: --signal %s: unknown signal name\n",
                 f.signal.c_str());
    return kKillExitUsage;
  }
  if (f.pids.empty() && f.gpu_names.empty()) {
    std::fprintf(stderr,
                 "gpudoctor: kill: name the PIDs or --gpu N (see --help)\n");
    return kKillExitUsage;
  }
  if (f.json && !f.yes && !f.dry_run) {
    std::fprintf(stderr,
                 "gpudoctor: kill: --json prints one object and asks "
                 "nothing: give --yes (or --dry-run for the plan)\n");
    return kKillExitUsage;
  }
  if (f.mig && f.gpu_names.size() != 1) {
    std::fprintf(stderr,
                 "gpudoctor: kill: --mig GI selects an instance of one GPU: "
                 "give --gpu N %s\n",
                 f.gpu_names.empty() ? "too" : "with one GPU, not a list");
    return kKillExitUsage;
  }
  Sampler sampler(g.sampler_options());
  const TraceHeader& header = sampler.header();
  if (header.nvml_status != kNvmlOk && !f.json)
    std::cout << "!! " << explain_nvml_status(header)
              << ": no process counts as a GPU process (use --any to proceed "
                 "anyway)\n";
  f.gpus = gpu_flag_indices(header, f.gpu_names);
  Sample before = sampler.sample();
  // The plan names each target's Slurm job and Kubernetes pod.
  sampler.name_jobs(before);

  KillRequest req{f.pids, f.gpus, f.user, f.tree, f.any, f.mig};
  auto procs = ProcSnapshot::read(g.proc_root);
  KillContext ctx = make_kill_context(static_cast<uint32_t>(getpid()), header,
                                      before, procs, g.proc_root, g.dev_prefix);
  if (f.mig && !ctx.instance_profile.count({f.gpus.at(0), *f.mig})) {
    std::fprintf(stderr,
                 "gpudoctor: kill: --mig %u: GPU %d has no MIG instance with "
                 "that GPU instance id\n",
                 *f.mig, f.gpus.at(0));
    return kKillExitUsage;
  }
  KillPlan plan = plan_kill(req, ctx, procs);
  api::KillApiReply reply = json_reply(f, *sig, plan, before, procs);
  // The text as it goes, or the JSON object once at the end.
  auto done = [&](int code, const std::string& message, bool text = true) {
    if (f.json) {
      reply.exit_code = code;
      reply.message = message;
      std::cout << api::kill_api_reply_json(reply) << "\n";
    } else if (text && !message.empty()) {
      std::cout << message << "\n";
    }
    return code;
  };

  for (uint32_t pid : plan.not_found)
    std::fprintf(stderr, "gpudoctor: kill: pid %u: no such process\n", pid);
  if (!plan.not_found.empty()) {
    std::string pids;
    for (uint32_t p : plan.not_found)
      pids += (pids.empty() ? "" : ",") + std::to_string(p);
    return done(kKillExitError,
                "No such process: " + pids + ". Nothing was sent.", false);
  }

  if (!f.json)
    std::cout << render_kill_plan(plan, before, signal_name(*sig), f.force,
                                  f.timeout_s);
  if (!plan.refusals.empty()) {
    if (!f.json) std::cout << render_kill_refusals(plan, procs);
    return done(kKillExitRefused, "Refused, nothing was sent.", false);
  }
  if (plan.targets.empty() && plan.zombies.empty()) {
    if (plan.notes.empty())
      return done(kKillExitReleased, "Nothing to signal.");
    if (!f.json) {
      // The owners are gone and their memory is not back: say what `who`
      // says (the holder to end, or the reset).
      std::cout << "Nothing to signal.\n"
                << render_gone_owners_advice(
                       gone_owners_accounts(f, header, before, procs, g));
    }
    return done(kKillExitNotReleased, "Nothing to signal.", false);
  }
  if (f.dry_run) return done(kKillExitReleased, "Dry run: nothing was sent.");
  if (!f.yes && !plan.targets.empty() && !confirmed()) return kKillExitRefused;

  KillSessionOptions opts{g.proc_root, g.dev_prefix, *sig, f.timeout_s,
                          f.force};
  PrintingObserver printer(!f.json);
  KillOutcome outcome = run_kill_session(
      plan, ctx, procs, before, header, [&sampler] { return sampler.sample(); },
      opts, printer);
  if (!f.json) std::cout << render_kill_outcome(outcome);
  reply.steps = std::move(printer.steps);
  const int code = outcome.exit_code();
  const std::string message = kill_result_message(outcome.result);
  reply.outcome = std::move(outcome);
  return done(code, message, false);
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
  add_gpu_list_option(*cmd, "--gpu", f->gpu_names,
                      "every process NVML lists on these GPUs, e.g. 0,2: "
                      "indices, UUIDs, PCI addresses or /dev/nvidiaN");
  cmd->add_option("--mig", f->mig,
                  "with --gpu: only the processes on this MIG GPU instance "
                  "(its GI id, as `status` and `who` show it)")
      ->transform(decimal_in(0, kMaxMigInstanceId));
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
  cmd->add_flag("--json", f->json,
                "print the result as one JSON object, the one serve's POST "
                "/api/v1/kill answers (plan, steps, memory before and after, "
                "exit_code, message); needs --yes or --dry-run");
  cmd->add_flag("--any", f->any,
                "allow processes that are not GPU processes nor their workers");
  cmd->callback([&global, f] {
    try {
      command_exit_code() = run_kill(global, *f);
    } catch (const CLI::ParseError&) {
      throw;  // a usage error (--gpu naming no GPU here): exit 2
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gpudoctor: kill: %s\n",
                   terminal_safe(e.what(), kTerminalSentenceMax).c_str());
      command_exit_code() = kKillExitError;
    }
  });
}

GD_REGISTER_NAMED_COMMAND(45, "kill", add_kill_command);

}  // namespace gd
