// `diagnose` on the live machine: one sample every interval until the
// window has passed or `stop` is set (Ctrl-C diagnoses what was collected
// so far). Samples go to the engine as they are taken, so nothing
// accumulates here.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>

#include "diagnose/engine.h"

namespace gd {

class LiveSampleSource : public SampleSource {
 public:
  struct Progress {
    std::function<void(long taken, long total)> on_sample;  // after each
    std::function<void(long taken)> on_end;                 // once, at the end
  };
  // `take` reads the machine once (a Sampler has rates from its first sample).
  LiveSampleSource(std::function<Sample()> take, double interval_s,
                   double duration_s, const std::atomic<bool>& stop,
                   Progress progress = {});

  bool next(Sample& out) override;
  long total() const { return total_; }

 private:
  using Clock = std::chrono::steady_clock;
  bool finish();

  std::function<Sample()> take_;
  Clock::duration interval_;
  long total_;
  long taken_ = 0;
  const std::atomic<bool>& stop_;
  Progress progress_;
  Clock::time_point next_;
  bool ended_ = false;
};

}  // namespace gd
