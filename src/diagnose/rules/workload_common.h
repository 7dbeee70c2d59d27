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

  void update(const ProcessSample& p) {
    pid = p.pid;
    if (!p.name.empty()) name = p.name;
    if (!p.user.empty()) user = p.user;
    if (p.slurm_job_id) slurm_job = *p.slurm_job_id;
  }
  // "pid 4242 (python, alice)" / "pid 4242"; a Slurm job's process:
  // "pid 4242 (python, alice, slurm 1234)".
  std::string text() const {
    const std::string job = slurm_job.empty() ? "" : "slurm " + slurm_job;
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

// A GPU sample with data (not lost, not a missed read).
inline bool readable(const GpuSample& g) { return !g.lost && !g.stale; }

}  // namespace gd::workload
