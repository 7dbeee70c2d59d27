// Bounds what one sample keeps of its processes, so whatever holds samples
// (serve's window, a trace being read by diagnose or top) stays small
// whatever the processes look like (thousands of workers, megabyte command
// lines, a hand-made trace line with a million processes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_set>
#include <utility>
#include <vector>

#include "model/sample.h"

namespace gd {

struct ProcessBudget {
  // Processes kept per sample: the GPU processes first, then their
  // ancestors (launcher, shell), then their workers, in sample order.
  size_t max_processes = 512;
  // Command-line bytes kept per sample; past it, each further command line
  // is cut to short_cmdline_bytes (with the truncation marker).
  size_t max_cmdline_bytes = 256 * 1024;
  size_t short_cmdline_bytes = 256;
};

// The pids a sample's GPUs list as their processes.
std::unordered_set<uint32_t> gpu_process_pids(const Sample& s);

// Which of a sample's processes, given as (pid, ppid) in sample order, the
// budget keeps: their indices, the GPU processes (`on_gpu`) first, then
// their ancestors, then the rest, each group in sample order. All of them
// when they fit. Lets a reader choose before it decodes a process.
std::vector<size_t> processes_to_keep(
    const std::vector<std::pair<uint32_t, uint32_t>>& pid_ppid,
    const std::unordered_set<uint32_t>& on_gpu, size_t max_processes);

// Cuts command lines past the budget's bytes (the processes kept are
// already within max_processes).
void cap_cmdlines(std::vector<ProcessSample>& processes,
                  const ProcessBudget& budget);

// Applies `budget` to `s` (the kept processes in processes_to_keep's
// order); returns how many processes were left out. Also adds them to
// s.processes_left_out.
size_t apply_process_budget(Sample& s, const ProcessBudget& budget);

}  // namespace gd
