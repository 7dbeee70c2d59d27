#include "diagnose/sample_context.h"

namespace gd {

void SampleContext::reset(const Sample& sample) {
  sample_ = &sample;
  tree_built_ = false;
  used_marks_ = 0;
}

const ProcessTree& SampleContext::tree() const {
  if (!tree_built_) {
    if (tree_)
      tree_->rebuild(*sample_);
    else
      tree_.emplace(*sample_);
    tree_built_ = true;
  }
  return *tree_;
}

const std::vector<GpuJob>& SampleContext::gpu_jobs(
    double worker_saturated_pct) const {
  for (size_t i = 0; i < used_marks_; ++i)
    if (marks_[i].pct == worker_saturated_pct) return marks_[i].jobs;
  if (used_marks_ == marks_.size()) marks_.emplace_back();
  Marked& m = marks_[used_marks_];
  m.pct = worker_saturated_pct;
  if (used_marks_ == 0) {
    tree().gpu_jobs(worker_saturated_pct, m.jobs);
  } else {
    // The jobs do not depend on the mark: copy the first mark's and recount.
    m.jobs = marks_.front().jobs;
    tree().count_saturated(m.jobs, worker_saturated_pct);
  }
  ++used_marks_;
  return m.jobs;
}

}  // namespace gd
