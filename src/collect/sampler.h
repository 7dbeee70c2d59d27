// Joins the sources (NVML, /proc + /sys, kernel log) into one Sample of the
// model. Every consumer that samples live (status, ps, record, diagnose,
// serve) goes through here.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "model/sample.h"
#include "nvml/device_reader.h"
#include "slurm/job_names.h"

namespace gd {

struct SamplerOptions {
  std::string nvml_lib = "libnvidia-ml.so.1";
  std::string proc_root = "/proc";
  std::string sys_root = "/sys";
  std::string kmsg_path = "/dev/kmsg";  // "" disables the kernel log
  std::string dev_prefix = "/dev";      // NVIDIA device nodes (device holders)
  std::string hostname;          // the header's host name; "" = this host's own
  bool kmsg_from_start = false;  // replay the whole log (tests, check)
  // Unix seconds: kernel-log lines stamped before it are dropped (check
  // --since); 0 = none.
  double kmsg_since = 0;
  std::chrono::milliseconds deadline{1000};  // per-GPU NVML read bound
  // How often the costly NVML reads are refreshed (0 = every sample).
  std::chrono::milliseconds slow_read_interval =
      nvml::DeviceReader::kSlowReadInterval;
  // scontrol for Slurm jobs' names (slurm/job_names.h); "" = do not ask.
  // Default: GPUDOCTOR_SCONTROL, else scontrol on PATH.
  std::string scontrol = slurm::scontrol_path_from_env();
  // Kubernetes pods are named from the kubelet's and the container runtime's
  // sockets where they exist (pods/pods_library.h:
  // GPUDOCTOR_POD_RESOURCES_SOCKET and GPUDOCTOR_CRI_SOCKET, "none" = not
  // asked).
};

class Sampler {
 public:
  explicit Sampler(const SamplerOptions& options);
  ~Sampler();
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  const TraceHeader& header() const;
  // One sample at the current time. Host rates are averages since the
  // previous reading (the first one is taken when the Sampler is built, so
  // even the first sample has rates). `spent`: an earlier sample's process
  // list, done with, whose memory this one's reuses.
  Sample sample(std::vector<ProcessSample> spent = {});
  // One sample with real rates for a command that samples once (status, ps,
  // the checklist): the host is read before the GPUs (the Sampler's
  // constructor does, while NVML loads) and again after them, at least
  // `window` apart, and the GPU processes twice, at least 2/3 of `window`
  // apart: first those NVML listed with the static facts, while the GPUs
  // are read, or, for a process new in the sample, after the GPU read.
  // Where the counters did not move a rate stays unset (n/a). On a real
  // GPU the windows pass while NVML loads and reads: nothing waits for them.
  //
  // `shows` says what the caller shows of the sample: kEverything (a
  // trace, status --json, ps, check), or kNoDeviceHolders (status's text):
  // then s.device_holders stays unset and the processes it would carry are
  // not in s.processes. Its scan of every process's open files (4x the
  // cost of reading every process's stat) then runs only when it could
  // change the other work shown: some GPU memory is orphaned and a busy
  // process outside the jobs, or a relative of one, holds CUDA files NVML
  // does not list. host.other_cpu_top is the same either way.
  enum class OneShotShows { kEverything, kNoDeviceHolders };
  Sample sample_once(std::chrono::milliseconds window = kOneShotRateWindow,
                     OneShotShows shows = OneShotShows::kEverything);
  // Fills s.slurm_jobs and the processes' pods, waiting up to `wait` for
  // names not yet known (a one-shot command that took its sample with
  // sample()). sample() fills what is known without waiting; sample_once()
  // waits by itself.
  void name_jobs(Sample& s, std::chrono::milliseconds wait = kOneShotNamesWait);

  // Long enough for CPU% from /proc's 10 ms ticks (USER_HZ=100) to see a
  // busy process, short enough that `status` stays well under 50 ms.
  static constexpr std::chrono::milliseconds kOneShotRateWindow{30};
  // How long sample_once waits at most for Slurm jobs' and pods' names
  // (asked while the GPUs are read): a slow slurmctld or kubelet leaves
  // them unknown.
  static constexpr std::chrono::milliseconds kOneShotNamesWait{1000};

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Wall clock as Unix seconds.
double unix_now();

}  // namespace gd
