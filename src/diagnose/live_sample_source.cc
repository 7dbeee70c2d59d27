#include "diagnose/live_sample_source.h"

#include <algorithm>
#include <thread>

namespace gd {

LiveSampleSource::LiveSampleSource(std::function<Sample()> take,
                                   double interval_s, double duration_s,
                                   const std::atomic<bool>& stop,
                                   Progress progress)
    : take_(std::move(take)),
      interval_(std::chrono::duration_cast<Clock::duration>(
          std::chrono::duration<double>(interval_s))),
      total_(static_cast<long>(duration_s / interval_s + 0.5)),
      stop_(stop),
      progress_(std::move(progress)) {
  if (total_ < 2) total_ = 2;  // rules need at least two samples to compare
  next_ = Clock::now() + interval_;
}

bool LiveSampleSource::next(Sample& out) {
  if (taken_ >= total_ || stop_.load()) return finish();
  // Short sleeps, so Ctrl-C is answered within 50 ms.
  while (!stop_.load() && Clock::now() < next_)
    std::this_thread::sleep_for(std::min<Clock::duration>(
        std::chrono::milliseconds(50), next_ - Clock::now()));
  if (stop_.load()) return finish();
  out = take_();
  ++taken_;
  next_ += interval_;
  if (next_ < Clock::now()) next_ = Clock::now();
  if (progress_.on_sample) progress_.on_sample(taken_, total_);
  return true;
}

bool LiveSampleSource::finish() {
  if (!ended_ && progress_.on_end) progress_.on_end(taken_);
  ended_ = true;
  return false;
}

}  // namespace gd
