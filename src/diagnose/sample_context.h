// What the engine works out once per sample and hands to every rule: the
// sample's process tree and its GPU jobs. Building these per rule made the
// tree the largest cost of `diagnose --from` on a long trace.
#pragma once

#include <deque>
#include <optional>
#include <utility>
#include <vector>

#include "model/process_tree.h"
#include "model/sample.h"

namespace gd {

class SampleContext {
 public:
  explicit SampleContext(const Sample& sample) : sample_(sample) {}
  SampleContext(const SampleContext&) = delete;
  SampleContext& operator=(const SampleContext&) = delete;

  const Sample& sample() const { return sample_; }
  // Built on first use, then shared by every rule that asks.
  const ProcessTree& tree() const;
  // The sample's GPU jobs for one worker-saturation mark; the few marks the
  // rules use are each computed once per sample.
  const std::vector<GpuJob>& gpu_jobs(double worker_saturated_pct) const;

 private:
  const Sample& sample_;
  mutable std::optional<ProcessTree> tree_;
  // A deque: references handed out stay valid as marks are added.
  mutable std::deque<std::pair<double, std::vector<GpuJob>>> jobs_;
};

}  // namespace gd
