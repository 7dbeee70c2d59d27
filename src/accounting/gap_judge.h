// Which intervals between samples are too long to attribute: a sampler
// that stopped (or samples lost) leaves a gap over which nobody knows who
// held a GPU, so it is counted apart ("unattributed") instead of guessed.
#pragma once

#include <array>
#include <cstddef>

namespace gd::accounting {

class GapJudge {
 public:
  explicit GapJudge(double factor) : factor_(factor) {}
  // The longest interval still attributed now: `factor` x the median of
  // the last few sample intervals (so a history whose older part is
  // downsampled to 1-minute steps adapts after a few steps).
  double limit() const;
  // Records the interval between two consecutive samples of the node.
  void observe(double dt);

 private:
  static constexpr size_t kWindow = 9;
  // With no interval seen yet, nothing tells the sampling period; an hour
  // without a sample is a gap whatever it was.
  static constexpr double kNoHistoryLimit = 3600;
  double factor_;
  std::array<double, kWindow> recent_{};
  size_t count_ = 0, next_ = 0;
};

}  // namespace gd::accounting
