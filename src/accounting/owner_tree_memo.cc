#include "accounting/owner_tree_memo.h"

namespace gd::accounting {

bool OwnerTreeMemo::same(const Entry& e, const ProcessSample& p) {
  // A NaN start time never equals itself: the owners are resolved again.
  return e.pid == p.pid && e.ppid == p.ppid && e.start_time == p.start_time &&
         e.name == p.name && e.user == p.user && e.cgroup == p.cgroup &&
         e.cmdline == p.cmdline && e.slurm_job_id == p.slurm_job_id &&
         e.pod == p.pod;
}

bool OwnerTreeMemo::same_as_last(const std::vector<ProcessSample>& processes,
                                 const std::vector<SlurmJob>& slurm_jobs) {
  if (valid_ && last_.size() == processes.size() && last_jobs_ == slurm_jobs) {
    bool all = true;
    for (size_t i = 0; all && i < processes.size(); ++i)
      all = same(last_[i], processes[i]);
    if (all) return true;
  }
  last_.resize(processes.size());
  for (size_t i = 0; i < processes.size(); ++i) {
    const ProcessSample& p = processes[i];
    Entry& e = last_[i];
    e.pid = p.pid;
    e.ppid = p.ppid;
    e.user = p.user;
    e.name = p.name;
    e.cmdline = p.cmdline;
    e.cgroup = p.cgroup;
    e.start_time = p.start_time;
    e.slurm_job_id = p.slurm_job_id;
    e.pod = p.pod;
  }
  last_jobs_ = slurm_jobs;
  valid_ = true;
  return false;
}

}  // namespace gd::accounting
