#include "diagnose/sample_context.h"

namespace gd {

const ProcessTree& SampleContext::tree() const {
  if (!tree_) tree_.emplace(sample_);
  return *tree_;
}

const std::vector<GpuJob>& SampleContext::gpu_jobs(
    double worker_saturated_pct) const {
  for (const auto& [pct, jobs] : jobs_)
    if (pct == worker_saturated_pct) return jobs;
  if (jobs_.empty()) {
    jobs_.emplace_back(worker_saturated_pct,
                       tree().gpu_jobs(worker_saturated_pct));
  } else {
    jobs_.emplace_back(worker_saturated_pct, jobs_.front().second);
    tree().count_saturated(jobs_.back().second, worker_saturated_pct);
  }
  return jobs_.back().second;
}

}  // namespace gd
