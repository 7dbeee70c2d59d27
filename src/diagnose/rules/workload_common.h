// Helpers shared by the workload rules (memory, input pipeline, host, job
// layout): threshold lookup, process labels, and the per-window bookkeeping
// every rule needs. Header-only so that the rules/*.cc glob stays the only
// build input.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "diagnose/config.h"
#include "model/pod_label.h"
#include "model/sample.h"

namespace gd::workload {

// Config key "<rule-id>.<name>", e.g. "memory-leak.min_r2".
inline double threshold(const Config& config, std::string_view rule,
                        std::string_view name, double default_value) {
  std::string key;
  key.reserve(rule.size() + name.size() + 1);
  key.append(rule).append(".").append(name);
  return config.get(key, default_value);
}

// What we remember about a process to name it in evidence.
struct ProcLabel {
  uint32_t pid = 0;
  std::string name, user;
  std::string slurm_job;  // its Slurm job id, "" none
  std::string pod;        // its Kubernetes pod (model/pod_label.h), "" none

  void update(const ProcessSample& p) {
    pid = p.pid;
    if (!p.name.empty()) name = p.name;
    if (!p.user.empty()) user = p.user;
    if (p.slurm_job_id) slurm_job = *p.slurm_job_id;
    if (p.pod) pod = pod_label(*p.pod);
  }
  // "pid 4242 (python, alice)" / "pid 4242"; a Slurm job's process:
  // "pid 4242 (python, alice, slurm 1234)"; a pod's:
  // "pid 4242 (python, alice, pod ml/train-0/main (deleted))".
  std::string text() const {
    std::string job;
    if (!slurm_job.empty())
      job = "slurm " + slurm_job;
    else if (!pod.empty())  // a pod known by its UID alone reads "pod UID"
      job = pod.rfind("pod ", 0) == 0 ? pod : "pod " + pod;
    if (name.empty())
      return job.empty() ? fmt::format("pid {}", pid)
                         : fmt::format("pid {} ({})", pid, job);
    std::string who = name;
    if (!user.empty()) who += ", " + user;
    if (!job.empty()) who += ", " + job;
    return fmt::format("pid {} ({})", pid, who);
  }
};

inline constexpr double kMiB = 1024.0 * 1024.0;
inline constexpr double kGiB = 1024.0 * kMiB;

// First and last sample time of the window, and how many samples it had.
struct Window {
  double start = 0, end = 0;
  size_t samples = 0;
  void add(double t) {
    if (samples++ == 0) start = t;
    end = t;
  }
  double span() const { return end - start; }
};

// Per-pid state of processes that came and went. Over serve's week of
// history a node sees tens of thousands of short GPU processes; a rule
// that kept an entry for each (1-2 KB across the rules) grew a Usage
// request by ~100 MB. Every kSweepEvery samples a rule hands the entries
// unseen for kEndedAfterS to its judge, which folds what the entry can
// still add to a finding and says whether it may go. A pid seen again
// after that starts a new entry, as a reused pid is a new process.
inline constexpr size_t kSweepEvery = 256;
// Longer than any gap in a live process's readings (a missed NVML read, a
// minute-tier step of serve's history).
inline constexpr double kEndedAfterS = 600;

class EndedSweep {
 public:
  // True once every kSweepEvery calls (one a sample).
  bool due() { return ++calls_ % kSweepEvery == 0; }

 private:
  size_t calls_ = 0;
};

// Erases each entry of `m` last seen (last_t(entry)) more than
// kEndedAfterS before `now` for which gone(key, entry) says so.
template <class Map, class LastT, class Gone>
void sweep_ended(Map& m, double now, LastT last_t, Gone gone) {
  for (auto it = m.begin(); it != m.end();) {
    if (now - last_t(it->second) > kEndedAfterS && gone(it->first, it->second))
      it = m.erase(it);
    else
      ++it;
  }
}

// A GPU sample with data (not lost, not a missed read).
inline bool readable(const GpuSample& g) { return !g.lost && !g.stale; }

}  // namespace gd::workload
