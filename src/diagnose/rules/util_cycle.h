// A utilisation series that swings again and again between a trough (below
// `low`) and a peak (at or above `high`): how many swings, their period (the
// time from one trough's start to the next's), how regular that period is,
// and how deep and high the swings go. Values between the two marks keep the
// current phase (hysteresis), so noise around one mark is not a swing.
// Bounded state: running sums only. Header-only, like workload_common.h, so
// that the rules/*.cc glob stays the only build input.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "diagnose/evidence.h"

namespace gd {

class UtilCycle {
 public:
  UtilCycle(double low, double high) : low_(low), high_(high) {}

  void add(double t, double util) {
    if (util < low_) {
      if (phase_ == kTrough) {
        trough_min_ = std::min(trough_min_, util);
        return;
      }
      // A trough starts. Only one that follows a peak starts a swing: the
      // series may begin half-way through a trough.
      counted_ = phase_ == kPeak;
      if (counted_) {
        peaks_.add(peak_max_);
        if (onsets_ > 0) add_period(t - last_onset_);
        ++onsets_;
        last_onset_ = t;
      }
      phase_ = kTrough;
      trough_min_ = util;
    } else if (util >= high_) {
      if (phase_ == kPeak) {
        peak_max_ = std::max(peak_max_, util);
        return;
      }
      if (phase_ == kTrough && counted_) troughs_.add(trough_min_);
      phase_ = kPeak;
      peak_max_ = util;
    }
  }

  // Complete periods measured (trough start to the next trough start with a
  // peak in between).
  size_t cycles() const { return periods_; }
  double period_mean() const { return mean_; }
  // Coefficient of variation of the period (standard deviation / mean): 0 for
  // a clockwork cycle, ~1 for swings at random times.
  double period_spread() const {
    if (periods_ < 2 || mean_ <= 0) return 0;
    return std::sqrt(m2_ / static_cast<double>(periods_ - 1)) / mean_;
  }
  // The lowest value of a typical trough and the highest of a typical peak
  // (means over the swings).
  const Stat& troughs() const { return troughs_; }
  const Stat& peaks() const { return peaks_; }

 private:
  enum Phase { kNone, kTrough, kPeak };

  // Welford's running mean and variance.
  void add_period(double p) {
    ++periods_;
    double d = p - mean_;
    mean_ += d / static_cast<double>(periods_);
    m2_ += d * (p - mean_);
  }

  double low_, high_;
  Phase phase_ = kNone;
  bool counted_ = false;  // the current trough follows a peak
  double trough_min_ = 0, peak_max_ = 0;
  size_t onsets_ = 0;
  double last_onset_ = 0;
  size_t periods_ = 0;
  double mean_ = 0, m2_ = 0;
  Stat troughs_, peaks_;
};

}  // namespace gd
