// The fields of a sample's processes that decide who owns a GPU process
// (owner_of: the process tree and each process's pid, ppid, user, name,
// command line, cgroup and start time), remembered from one sample to the
// next: while samples repeat them, the owners resolved once still hold.
// Over a week of a steady node that is every sample but a few.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/sample.h"

namespace gd::accounting {

class OwnerTreeMemo {
 public:
  // True when `processes` (in order) decide owners exactly as the ones
  // remembered; otherwise remembers them and returns false.
  // The Slurm jobs' names count too: a name that arrives relabels the job.
  bool same_as_last(const std::vector<ProcessSample>& processes,
                    const std::vector<SlurmJob>& slurm_jobs = {});

 private:
  struct Entry {
    uint32_t pid = 0;
    std::optional<uint32_t> ppid;
    std::string user, name, cmdline;
    std::optional<std::string> cgroup;
    std::optional<double> start_time;
    std::optional<std::string> slurm_job_id;
    std::optional<ProcessPod> pod;
  };
  static bool same(const Entry& e, const ProcessSample& p);
  std::vector<Entry> last_;
  std::vector<SlurmJob> last_jobs_;
  bool valid_ = false;
};

}  // namespace gd::accounting
