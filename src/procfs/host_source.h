// Host side of a sample: /proc and /sys, with the roots overridable for
// fixture tests. Not thread-safe; one instance per sampler.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/sample.h"

namespace gd {

class HostSource {
 public:
  explicit HostSource(std::string proc_root = "/proc",
                      std::string sys_root = "/sys");
  ~HostSource();

  // Static facts for the trace header (hostname, kernel, cpu, memory, pid
  // namespace: "container" when our PID namespace is not the initial one).
  HostInfo host_info();

  // Rates and percentages are averages since the previous call; the first
  // call leaves rate fields unset (nullopt) rather than guessing.
  HostSample sample(double now);

  // Every pid in gpu_pids plus all of its descendants (data-loader workers)
  // and its ancestors up to its launcher or shell, in pid order. A gpu pid
  // absent from /proc gets state "missing". cpu_pct is computed against the
  // previous call for the same pid.
  // storage: as ProcessTable::processes takes it.
  std::vector<ProcessSample> processes(const std::vector<uint32_t>& gpu_pids,
                                       double now,
                                       std::vector<ProcessSample> storage = {});

  // The busiest processes outside every GPU job (host.other_cpu_top) at the
  // last sample(), the jobs being those of the last processes() call.
  // nullopt until sample() has read twice.
  std::optional<std::vector<OtherCpuProcess>> other_cpu_top();

  // The busy processes outside every GPU job at the last sample(), with
  // their ancestors and descendants (procfs::OtherCpuScan::busy_families):
  // what other_cpu_top() could list, and their relatives. Sorted.
  std::vector<uint32_t> other_cpu_busy_families() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gd
