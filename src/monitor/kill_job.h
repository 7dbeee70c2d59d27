// `k` in top: exactly the safe path of `gpudoctor kill` (procmgmt's kill
// plan and kill session: the same refusals, confirmation, pidfd pinning,
// syslog and the check that NVML freed the memory), run on a thread of its
// own so the screen keeps drawing while it waits for exits and memory. The
// screen shows the plan, asks, and shows each step and the outcome
// (views/kill_view.h renders them, as for the command). Live, procmgmt runs
// here; with --connect, serve runs it on its node (remote_kill.h).
#pragma once

#include <csignal>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "model/sample.h"
#include "procmgmt/kill_plan.h"
#include "procmgmt/kill_session.h"
#include "procmgmt/proc_snapshot.h"

namespace gd::monitor {

struct KillJobOptions {
  std::string proc_root = "/proc";
  std::string dev_prefix = "/dev";
  int signal = SIGTERM;
  // TERM; KILL for what outlives the wait only when asked (`f` in top's
  // dialog, as `gpudoctor kill --force`): one rule for both.
  double timeout_s = 10;
  bool force = false;
};

// One step of the session as it happened (KillObserver's calls).
using KillStep = procmgmt::KillStep;

// Where a kill job plans and runs.
class KillBackend {
 public:
  virtual ~KillBackend() = default;
  struct Planned {
    procmgmt::KillPlan plan;
    Sample before;                 // NVML's processes (the plan's GPU memory)
    procmgmt::ProcSnapshot procs;  // the processes the refusals name
  };
  // The plan for `pids` (as `gpudoctor kill PID...`: no --tree, --any or
  // --user). Throws std::runtime_error with one line.
  virtual Planned plan(const std::vector<uint32_t>& pids,
                       const KillJobOptions& options) = 0;
  // Runs the plan plan() made, after the yes; each step goes to `observer`
  // as it becomes known. Throws std::runtime_error with one line.
  virtual procmgmt::KillOutcome run(const KillJobOptions& options,
                                    procmgmt::KillObserver& observer) = 0;
  // "" on this machine, else where the processes are ended.
  virtual std::string where() const { return ""; }
  // From another thread: a plan() or run() waiting on the network returns
  // (throws) at once. A local session is bounded by its own timeouts.
  virtual void cancel() {}
};

// This machine: a fresh sample through `take_sample` (NVML's current
// holders, re-read while waiting for the memory) and a /proc snapshot.
std::unique_ptr<KillBackend> local_kill_backend(
    std::function<Sample()> take_sample, TraceHeader header);

class KillJob {
 public:
  enum class Stage { kPlanning, kPlanned, kRunning, kDone, kFailed };

  // Starts planning at once on the job's thread, through `backend`.
  // `wake` is called from the job's thread after every change.
  KillJob(std::vector<uint32_t> pids, std::unique_ptr<KillBackend> backend,
          KillJobOptions options, std::function<void()> wake);
  // On this machine (local_kill_backend).
  KillJob(std::vector<uint32_t> pids, std::function<Sample()> take_sample,
          TraceHeader header, KillJobOptions options,
          std::function<void()> wake);
  // Waits for the session (bounded by its timeouts); a remote one is
  // cancelled first, so quitting never waits on the network.
  ~KillJob();
  KillJob(const KillJob&) = delete;
  KillJob& operator=(const KillJob&) = delete;

  Stage stage() const;
  const std::vector<uint32_t>& pids() const { return pids_; }
  const KillJobOptions& options() const { return options_; }
  // "" on this machine, else where the processes are ended.
  std::string where() const { return backend_->where(); }
  // From kPlanned on (immutable then).
  const procmgmt::KillPlan& plan() const { return plan_; }
  const Sample& before() const { return before_; }
  const procmgmt::ProcSnapshot& procs() const { return procs_; }
  // The plan may go ahead after a yes: something to signal, no refusal.
  bool can_proceed() const;
  // kPlanned -> kRunning (ignored otherwise, and when !can_proceed());
  // `force`: SIGKILL to what outlives the wait.
  void confirm(bool force = false);
  std::vector<KillStep> steps() const;
  // kDone only.
  const procmgmt::KillOutcome& outcome() const { return outcome_; }
  // kFailed only.
  std::string error() const;

 private:
  class Observer;
  void plan_now();
  void run_session();

  std::vector<uint32_t> pids_;
  std::unique_ptr<KillBackend> backend_;
  KillJobOptions options_;
  std::function<void()> wake_;

  procmgmt::KillPlan plan_;
  Sample before_;
  procmgmt::ProcSnapshot procs_;
  procmgmt::KillOutcome outcome_;

  mutable std::mutex mu_;
  Stage stage_ = Stage::kPlanning;
  std::vector<KillStep> steps_;
  std::string error_;
  std::thread thread_;
};

}  // namespace gd::monitor
