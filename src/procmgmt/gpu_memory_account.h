// `gpudoctor who GPU`: every byte of one GPU's used memory, explained.
// used = sum(processes NVML lists) + driver reservation, and each listed
// process is live, a zombie, stuck in D state, or missing from our /proc.
// Device-file holders that NVML does not list are named too.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/container_ref.h"
#include "model/sample.h"
#include "procmgmt/device_holders.h"
#include "procmgmt/proc_snapshot.h"

namespace gd::procmgmt {

// A driver reservation above this is not plausible (NVIDIA reserves a few
// hundred MiB per GPU for its own use; the largest we know of are under
// 1 GiB), so more than this beyond the listed processes is reported as
// "held by something NVML does not list" rather than as driver memory.
inline constexpr uint64_t kMaxPlausibleDriverReserveBytes = 1ull << 30;

enum class HolderStatus { kLive, kUninterruptible, kZombie, kMissing };
const char* holder_status_name(
    HolderStatus s);  // live|uninterruptible|zombie|missing

struct AccountedProcess {
  uint32_t pid = 0;
  std::optional<uint64_t> used_bytes;
  std::string type;  // compute|graphics|...
  // The MIG instance it runs on (MIG-enabled GPUs).
  std::optional<uint32_t> gi_id, ci_id;
  HolderStatus status = HolderStatus::kLive;
  std::optional<ProcEntry> proc;    // what /proc says (absent when missing)
  std::optional<ProcEntry> parent;  // for zombies: who must reap it
  ContainerRef container;
  // Its Slurm job as model/slurm_label.h writes it; "" when none.
  std::string job;
  std::optional<ProcessPod> pod;     // its Kubernetes pod (the sample's)
  std::vector<std::string> devices;  // NVIDIA device files it has open
  std::string explanation;           // why the memory is (still) held
  std::string action;                // what to do about it ("" none)
};

struct OtherHolder {  // has NVIDIA device files open, not listed by NVML here
  ProcEntry proc;
  ContainerRef container;
  std::string job;  // its Slurm job (model/slurm_label.h); "" when none
  std::optional<ProcessPod> pod;  // its Kubernetes pod (the sample's)
  std::vector<std::string> devices;
  bool this_gpu = false;  // has /dev/nvidia<index> open (minor assumed = index)
  std::vector<std::string> libs;  // CUDA libraries it maps (holders of uvm)
  // A probable holder of memory no live listed process accounts for (a
  // CUDA client's files, listed by NVML nowhere: model/orphan_holders.h),
  // with why; probable ones come first, most likely first.
  bool probable = false;
  std::vector<std::string> evidence;
};

// One MIG instance of the GPU: its own memory, and who uses it.
struct MigInstanceAccount {
  uint32_t gi_id = 0, ci_id = 0;
  std::string profile, uuid;  // "3g.40gb", "MIG-..."
  std::optional<uint64_t> total_bytes, used_bytes;
  uint64_t listed_bytes = 0;  // of the processes on it
  std::vector<uint32_t> pids;
};

struct GpuMemoryAccount {
  int gpu = 0;
  std::string name, uuid;
  bool readable = true;  // false: lost/stale/absent GPU
  std::string unreadable_reason;
  std::optional<uint64_t> total_bytes, used_bytes;
  bool processes_known = false;             // NVML could list processes
  std::vector<AccountedProcess> processes;  // descending used_bytes
  uint64_t listed_bytes = 0;                // sum over known used_bytes
  int unknown_size_processes = 0;
  // used - listed, split into what the driver keeps and what no listed
  // process explains. Both unset when used is unknown.
  std::optional<uint64_t> driver_reserved_bytes;
  std::optional<uint64_t> unexplained_bytes;
  // Bytes of listed processes that no visible process accounts for
  // (missing from our /proc).
  uint64_t missing_bytes = 0;
  // Used memory no live listed process holds (used minus the live ones,
  // zombies and missing owners counted dead): the figure of the
  // orphaned-memory finding, top and the dashboard (model/memory_owners.h).
  // Unset when used or a live process's size is unknown.
  std::optional<uint64_t> not_owned_bytes;
  bool in_container = false;  // gpudoctor's own PID namespace is not the host's
  std::vector<OtherHolder> other_holders;
  // Used memory that no live listed process accounts for: a listed owner
  // is a zombie or gone (outside a container), or `unexplained_bytes` > 0.
  bool orphaned = false;
  std::vector<uint32_t> unreadable_fd_pids;
  std::vector<std::string> advice;  // what to do, most important first
  // The GPU reset paragraph when it is among `advice` ("" otherwise), and
  // the same without what every reset needs (reset_needs()), for a list of
  // GPUs that says that once.
  std::string reset_hint, reset_hint_short;
  // MIG-enabled GPUs: each instance's memory (empty otherwise).
  std::vector<MigInstanceAccount> mig_instances;
};

// `sample` must come from a sampler whose header is `header`.
GpuMemoryAccount account_gpu_memory(const TraceHeader& header,
                                    const Sample& sample, int gpu,
                                    const ProcSnapshot& procs,
                                    const DeviceScan& devices);

// The probable holders of `a`'s orphaned memory (other_holders marked
// probable), most likely first.
std::vector<uint32_t> probable_holder_pids(const GpuMemoryAccount& a);

// What every GPU reset needs (no process may have it open, ...): the tail
// of each GPU's reset advice.
std::string reset_needs();

// "how to see host PIDs" text shared by who and kill.
std::string host_pid_visibility_hint();

// What a GPU reset of `gpu` needs first when MIG is enabled: its instances
// destroyed, named with the commands; "" when `instances` is empty (MIG
// off, or its instances unknown).
std::string mig_reset_clause(int gpu,
                             const std::vector<MigInstanceAccount>& instances);
// Freeing memory kept on one MIG instance without touching the others:
// destroy and re-create that instance ("" for a process on no instance).
std::string mig_instance_advice(int gpu, const MigInstanceAccount& instance);
// The instance of `instances` with GPU instance id `gi`, or nullptr.
const MigInstanceAccount* find_instance(
    const std::vector<MigInstanceAccount>& instances,
    std::optional<uint32_t> gi);

}  // namespace gd::procmgmt
