// /proc/stat: the aggregate "cpu" line (jiffies since boot) and btime.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace gd::procfs {

// Cumulative jiffies of all CPUs together, from the "cpu " line. guest and
// guest_nice are already counted inside user/nice, so they are not kept.
struct CpuTimes {
  uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0,
           softirq = 0, steal = 0;
};

struct ProcStat {
  std::optional<CpuTimes> cpu;
  std::optional<uint64_t> btime;  // boot time, Unix seconds
};

ProcStat parse_proc_stat(std::string_view text);

// Shares of the interval between two readings, in percent of all CPUs.
// util counts user+nice+system+irq+softirq; iowait and steal are reported
// separately and are not part of util (a CPU stolen by the hypervisor or
// idling on I/O did no work for us). nullopt when no time passed.
struct CpuPercent {
  double util = 0, iowait = 0, steal = 0;
};
std::optional<CpuPercent> cpu_percent_between(const CpuTimes& before,
                                              const CpuTimes& after);

}  // namespace gd::procfs
