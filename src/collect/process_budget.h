// Bounds what one sample keeps of its processes, so a daemon that holds a
// window of samples stays small whatever the processes look like (thousands
// of workers, megabyte command lines).
#pragma once

#include <cstddef>

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

// Applies `budget` to `s`; returns how many processes were left out.
size_t apply_process_budget(Sample& s, const ProcessBudget& budget);

}  // namespace gd
