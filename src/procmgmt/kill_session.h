// `gpudoctor kill` after the plan is approved: signal the targets, wait for
// them to exit (SIGKILL after the timeout with `force`), re-read NVML until
// the memory they held is released, and explain what still holds it. No
// terminal here: progress goes to a KillObserver as it happens and the
// outcome comes back as data (views/kill_view.h prints both).
#pragma once

#include <atomic>
#include <csignal>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/sample.h"
#include "procmgmt/gpu_memory_account.h"
#include "procmgmt/kill_plan.h"
#include "procmgmt/kill_signal.h"
#include "procmgmt/proc_snapshot.h"

namespace gd::procmgmt {

// After SIGKILL a process ends as soon as it leaves the kernel; this long
// is enough unless it is stuck (D state), which is reported.
inline constexpr double kKillWaitSeconds = 5;

struct KillSessionOptions {
  std::string proc_root = "/proc";
  std::string dev_prefix = "/dev";  // NVIDIA device nodes, for the account
  int signal = SIGTERM;             // sent first
  double timeout_s = 10;  // wait for exits, then for NVML to free the memory
  bool force = false;     // SIGKILL whatever outlives the timeout
  // Who asked, for syslog; unset: this process's user and terminal.
  std::optional<Requester> requester = std::nullopt;
  // Set by another thread to stop waiting (a daemon shutting down): the
  // session ends with what it knows, sending nothing more.
  const std::atomic<bool>* stop = nullptr;
};

// Told of each step while the session runs, so a person sees it happen.
class KillObserver {
 public:
  virtual ~KillObserver() = default;
  // `error` is "" when the signal was sent, else why not.
  virtual void on_signal(uint32_t pid, int sig, const std::string& error) = 0;
  // `alive` processes outlived `timeout_s`; SIGKILL follows.
  virtual void on_escalate(size_t alive, double timeout_s) = 0;
};

// One thing a KillObserver was told, kept (top's dialog, serve's reply).
struct KillStep {
  bool escalation = false;
  uint32_t pid = 0;   // signal step
  int sig = 0;        // signal step
  std::string error;  // signal step: "" sent
  size_t alive = 0;   // escalation step
  double timeout_s = 0;
};

struct StillAliveProcess {
  uint32_t pid = 0;
  char state = '?';  // now, from /proc ('?' unreadable)
  std::string why;   // why no signal ended it, and what to do
};

struct GpuMemoryBeforeAfter {
  int gpu = 0;
  std::optional<uint64_t> before, after;  // NVML used memory
};

// A pid NVML still lists on `gpu` after its process ended or was signalled.
struct HeldMemory {
  uint32_t pid = 0;
  int gpu = 0;
  GpuMemoryAccount account;  // the GPU's memory, read after the wait
  // Processes still using the GPU (listed live ones, device-file holders):
  // a reset needs them gone.
  std::vector<uint32_t> gpu_users;
  std::string next;  // what to do about the memory the driver kept
  // Set when NVML no longer lists `pid` but the GPU's used memory did not
  // come back: the bytes used on `gpu` that no listed process accounts for.
  std::optional<uint64_t> unlisted_bytes;
};

enum class KillResult {
  kReleased,     // every holder exited and NVML no longer lists them
  kNoneOnGpu,    // every selected process exited; none was on a GPU
  kStillAlive,   // some outlived the signals
  kNotReleased,  // exited, but NVML still lists some on their GPUs, or
                 // lists none but the GPU's used memory did not come back
};

struct KillOutcome {
  KillResult result = KillResult::kReleased;
  std::vector<StillAliveProcess> still_alive;  // kStillAlive
  std::vector<GpuMemoryBeforeAfter> memory;    // GPUs the selection held
  std::vector<HeldMemory> not_released;        // kNotReleased
  int exit_code() const;                       // kKillExit*
};

// The result in one line: "GPU memory released.", "GPU memory NOT
// released.", ... (kill --json's and serve's POST /api/v1/kill's message).
const char* kill_result_message(KillResult r);

// What NVML lists, per GPU index.
std::map<int, std::vector<uint32_t>> nvml_gpu_pids(const Sample& s);
// The MIG instance of each listed process, and each instance's profile.
void add_mig_instances(const Sample& s, KillContext& context);
// The probable holders of each GPU's orphaned memory (who holds its device
// files when no live listed process accounts for its memory), from a scan
// of the device files under `dev_prefix`.
void add_orphan_holders(const TraceHeader& header, const Sample& s,
                        const ProcSnapshot& procs, const std::string& proc_root,
                        const std::string& dev_prefix, KillContext& context);
// Everything a plan needs to know of the machine, as every kill front end
// (the CLI, top, serve's API) gathers it: NVML's lists, MIG instances,
// orphan holders.
KillContext make_kill_context(uint32_t self_pid, const TraceHeader& header,
                              const Sample& before, const ProcSnapshot& procs,
                              const std::string& proc_root,
                              const std::string& dev_prefix);

// Runs the approved `plan` (made from `before`, `context` and `procs`).
// `read_gpus` takes a fresh sample (NVML is re-read through it while
// waiting for the memory); `header` is the header of its samples.
KillOutcome run_kill_session(const KillPlan& plan, const KillContext& context,
                             const ProcSnapshot& procs, const Sample& before,
                             const TraceHeader& header,
                             const std::function<Sample()>& read_gpus,
                             const KillSessionOptions& options,
                             KillObserver& observer);

}  // namespace gd::procmgmt
