// What a reader of stored samples fills in each sample when its consumer
// needs a few fields, not whole samples: a report over a week reads its
// accounted columns from serve's history (store) or its accounted fields
// from a trace (trace_io.h), instead of rebuilding every field of a week.
#pragma once

#include <string>
#include <vector>

namespace gd {

// Every sample keeps its time and its GPUs' index, lost and stale; the rest
// stays unknown unless named here.
struct SampleFields {
  // Numeric GPU fields by their metric names ("util_pct", "sm_active_pct":
  // the <field> of gpu.<field>). A name the reader does not know is an
  // error (StoreError, TraceError).
  std::vector<std::string> gpu;
  // Each GPU's process list: pid, type, used memory and SM %.
  bool gpu_processes = false;
  // The host processes' identity and tree: pid, ppid, user, name, cmdline,
  // cgroup, start_time, ns_pid, Slurm job and pod (not their libraries,
  // state or usage), and the sample's Slurm jobs.
  bool process_tree = false;
};

}  // namespace gd
