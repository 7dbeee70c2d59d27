// `gpudoctor ps --tree`: GPU jobs as trees, launcher -> ranks -> workers.
// A launcher is the nearest torchrun/mpirun/deepspeed/accelerate/srun...
// ancestor of a GPU process (read from /proc, since samples carry only GPU
// processes and their descendants); ranks without one stand alone.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/sample.h"
#include "procmgmt/proc_snapshot.h"

namespace gd::procmgmt {

struct TreeRank {
  uint32_t pid = 0;
  std::vector<int> gpus;
  std::optional<uint64_t> used_bytes;  // sum over its GPUs; unset when unknown
};

struct JobTreeRank {
  TreeRank rank;
  const ProcessSample* proc = nullptr;  // null: not in /proc (missing)
  std::vector<std::pair<const ProcessSample*, int>>
      workers;  // (process, depth >= 1)
};

struct JobTree {
  std::optional<ProcEntry> launcher;  // unset: the rank stands alone
  std::vector<JobTreeRank> ranks;
};

// `ranks` in display order; a rank that is a descendant of another listed
// rank is shown as that rank's worker instead. Pointers point into `sample`.
std::vector<JobTree> build_job_trees(const Sample& sample,
                                     const std::vector<TreeRank>& ranks,
                                     const ProcSnapshot& procs);

}  // namespace gd::procmgmt
