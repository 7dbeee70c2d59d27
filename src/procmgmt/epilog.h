// `gpudoctor epilog --job ID`: what a finished Slurm job left behind, and
// whether its GPUs got their memory back. Pure selection here (the caller
// supplies /proc, the device-file scan and each process's environment), so
// every rule is testable on fixture trees; the kill itself is the kill
// session of `gpudoctor kill` (kill_session.h).
//
// A process is the job's when:
//  - its cgroup names the job (common/slurm_job_id.h), or
//  - its cgroup names no job and its environment has SLURM_JOB_ID=ID, or
//  - it holds a device file of one of the job's GPUs (/dev/nvidiaN), maps
//    CUDA (holds /dev/nvidia-uvm), started after the job did, is not root's
//    and names no job at all (a process of the job that escaped both).
// Never: a process whose cgroup or environment names another job; init,
// kernel threads, gpudoctor and its ancestors (the epilog script, slurmd);
// Slurm's, munge's and NVIDIA's daemons by name (slurmd, slurmstepd,
// nvidia-persistenced, nv-hostengine, dcgm*); a device holder without
// nvidia-uvm (an NVML-only monitor: nvidia-smi, DCGM, gpudoctor serve).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "model/sample.h"
#include "procmgmt/device_holders.h"
#include "procmgmt/proc_snapshot.h"

namespace gd::procmgmt {

// Exit codes of `gpudoctor epilog` (docs/commands.md, docs/slurm.md).
inline constexpr int kEpilogExitClean = 0;    // nothing left, memory back
inline constexpr int kEpilogExitError = 1;    // could not run
inline constexpr int kEpilogExitNotBack = 2;  // memory not back
inline constexpr int kEpilogExitUsage = 64;   // bad flags

struct EpilogRequest {
  std::string job_id;     // 1..10 digits
  std::vector<int> gpus;  // the job's GPUs (indexes)
  // When the job started (Unix seconds): scontrol's StartTime, else the
  // earliest start of a process found by cgroup or environment. nullopt:
  // the device-holder rule is not applied.
  std::optional<double> job_start;
  uint32_t self_pid = 0;
};

struct EpilogProcess {
  ProcEntry proc;
  std::string why;  // "in the job's cgroup", "SLURM_JOB_ID=77 in its
                    // environment", "holds nvidia0, started during the job"
};

struct EpilogSelection {
  std::vector<EpilogProcess> leftovers;  // to be ended
  std::vector<EpilogProcess> spared;     // looked at and left alone, why
  std::optional<double> job_start;       // as used
};

// `environ_job(pid)`: SLURM_JOB_ID of the process's environment (nullopt:
// none or unreadable); asked only of processes whose cgroup names no job.
EpilogSelection select_epilog_leftovers(
    const EpilogRequest& request, const ProcSnapshot& procs,
    const DeviceScan& devices,
    const std::function<std::optional<std::string>(uint32_t)>& environ_job);

// One GPU after the kill: its used memory and whether it came back (no
// live process of this job listed, and used memory minus what other jobs'
// listed processes hold within the driver's reservation).
struct EpilogGpu {
  int gpu = 0;
  std::optional<uint64_t> used_bytes;
  bool back = false;
  // A pid NVML still lists (not another job's), and whether it is gone
  // from /proc; 0 when none is listed.
  uint32_t holder_pid = 0;
  bool holder_gone = false;
};

// `other_jobs`: listed pids that belong to other jobs (spared).
EpilogGpu judge_epilog_gpu(const Sample& s, int gpu,
                           const std::vector<uint32_t>& other_jobs,
                           const std::string& proc_root);

// "gpudoctor: GPU 3 holds 41.0 GiB after job 1234 ended; pid 5200 gone",
// at most 200 bytes.
std::string epilog_reason(const std::string& job_id, const EpilogGpu& g);

}  // namespace gd::procmgmt
