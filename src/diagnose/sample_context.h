// What the engine works out once per sample and hands to every rule: the
// sample's process tree and its GPU jobs. Building these per rule made the
// tree the largest cost of `diagnose --from` on a long trace.
#pragma once

#include <cstddef>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

#include "model/process_tree.h"
#include "model/sample.h"

namespace gd {

class SampleContext {
 public:
  explicit SampleContext(const Sample& sample) : sample_(&sample) {}
  SampleContext(const SampleContext&) = delete;
  SampleContext& operator=(const SampleContext&) = delete;

  // Moves on to the next sample. What was built for the last one is
  // forgotten, but its storage is kept: the engine keeps one context for a
  // whole trace instead of allocating a tree and jobs per sample.
  void reset(const Sample& sample);

  const Sample& sample() const { return *sample_; }
  // Built on first use, then shared by every rule that asks.
  const ProcessTree& tree() const;
  // The sample's GPU jobs for one worker-saturation mark; the few marks the
  // rules use are each computed once per sample. The reference is valid
  // until reset.
  const std::vector<GpuJob>& gpu_jobs(double worker_saturated_pct) const;

 private:
  const Sample* sample_;
  mutable std::optional<ProcessTree> tree_;
  mutable bool tree_built_ = false;  // for *sample_ (tree_ may be older)
  // One entry per mark asked for; entries past used_marks_ are spare
  // storage. A deque, never shrunk: references handed out stay valid as
  // marks are added.
  struct Marked {
    double pct = 0;
    std::vector<GpuJob> jobs;
  };
  mutable std::deque<Marked> marks_;
  mutable size_t used_marks_ = 0;
};

}  // namespace gd
