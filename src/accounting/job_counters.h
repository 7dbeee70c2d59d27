// serve's per-job counters (gpudoctor_job_*_total): the accountant's running
// totals per job, with a bounded set of label values.
//
// A job gets a series of its own when a slot is free (at most `slots` jobs
// at once) and keeps it while it holds a GPU; its slot is freed
// `release_after_s` after it last held one, and its series ends. The time
// and energy of every job without a slot go to one "other" series. Each
// series counts from when it got its slot, so the series always add up to
// what all jobs used, and every one only grows: Prometheus's rate() and
// increase() never see a reset.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "accounting/accountant.h"

namespace gd::accounting {

struct JobCounter {
  std::string key;   // the job's stable identity ("slurm:1234"), or "other"
  std::string name;  // what a person reads; untrusted, unsanitised
  Usage usage;       // since the series began
  bool other = false;
};

// Jobs with a series of their own: an ML node runs a few jobs at once, and
// every slot is a label value in every scrape.
inline constexpr size_t kJobSlots = 10;
// Jobs the accountant tells apart over the daemon's life before it folds
// new ones into its own "other" (their usage still reaches "other" here).
inline constexpr size_t kJobsTracked = 256;

class JobCounters {
 public:
  explicit JobCounters(const TraceHeader& header, size_t slots = kJobSlots,
                       double release_after_s = 600);

  // Samples in time order.
  void add(const Sample& sample);
  // The jobs with a slot (in the order they got it), then "other".
  std::vector<JobCounter> counters() const;

 private:
  struct Slot {
    JobCounter counter;
    double last_held_t = 0;
  };
  Accountant acc_;
  size_t max_slots_;
  double release_after_s_;
  std::unordered_map<std::string, Usage> seen_;  // each job's last totals
  std::vector<Slot> slots_;
  JobCounter other_;
};

}  // namespace gd::accounting
