// Which processes `gpudoctor kill` may signal, decided before anything is
// sent. Pure: the caller supplies the /proc snapshot and what NVML listed,
// so every safety rule is testable on fixture trees.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model/gpu_lookup.h"
#include "procmgmt/proc_snapshot.h"

namespace gd::procmgmt {

// Exit codes of `gpudoctor kill` (docs/memory.md, --help).
inline constexpr int kKillExitReleased = 0;  // killed, GPU memory released
inline constexpr int kKillExitError = 1;     // runtime error
inline constexpr int kKillExitUsage = 2;     // bad flags
inline constexpr int kKillExitRefused =
    3;  // refused (safety rule, declined, no tty)
inline constexpr int kKillExitNotReleased =
    4;  // processes gone, memory not released
inline constexpr int kKillExitStillAlive = 5;  // processes still alive

struct KillRequest {
  std::vector<uint32_t> pids{};  // explicit PIDs
  GpuSelection gpus{};           // every process NVML lists on these GPUs
  std::string user{};            // only processes of this user ("" any)
  bool tree = false;             // the whole job: launcher, ranks, workers
  bool any = false;              // allow processes unrelated to a GPU
  // With one GPU in `gpus`: only the processes on this MIG GPU instance.
  std::optional<uint32_t> mig_gi{};
};

struct KillContext {
  uint32_t self_pid = 0;
  uint32_t euid = 0;
  std::map<int, std::vector<uint32_t>> gpu_pids;  // what NVML lists, per GPU
  // MIG: (GPU, pid) -> the GPU instance NVML lists it on.
  std::map<std::pair<int, uint32_t>, uint32_t> gpu_instance{};
  // MIG: (GPU, GPU instance) -> its profile ("3g.40gb"), for the plan.
  std::map<std::pair<int, uint32_t>, std::string> instance_profile{};
  // Probable holders of GPU memory no live process accounts for (device
  // files of a CUDA client, listed by NVML nowhere; gpu_memory_account.h):
  // pid -> those GPUs. They are GPU-related targets in their own right.
  std::map<uint32_t, std::vector<int>> orphan_holders{};
  // Per GPU with such holders: the listed pids that are dead (zombie or
  // gone), whose memory ending the holders is meant to free.
  std::map<int, std::vector<uint32_t>> orphaned_pids{};
};

struct KillTarget {
  ProcEntry proc;
  std::string
      role;  // "GPU process on GPU 0", "worker of 4242", "launcher of 4242"
  std::vector<int> gpus;  // GPUs where NVML lists it
};

struct KillRefusal {
  uint32_t pid = 0;
  std::string reason;
};

struct KillPlan {
  std::vector<KillTarget> targets;  // to be signalled, parents before children
  std::vector<KillTarget>
      zombies;  // selected but already dead: nothing to send
  std::vector<KillRefusal> refusals;  // any refusal: nothing is sent at all
  std::vector<std::string> notes;   // selected but not signalable (missing ...)
  std::vector<uint32_t> not_found;  // explicit pids with no process
};

KillPlan plan_kill(const KillRequest& request, const KillContext& context,
                   const ProcSnapshot& procs);

// True for launchers of distributed jobs (torchrun, mpirun, deepspeed,
// accelerate, srun, ...), by name or command line.
bool is_launcher(const ProcEntry& p);

}  // namespace gd::procmgmt
