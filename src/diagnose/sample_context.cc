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
  jobs_.emplace_back(worker_saturated_pct,
                     tree().gpu_jobs(worker_saturated_pct));
  return jobs_.back().second;
}

}  // namespace gd
