// Samples that a producer pushes (a history scan: HistoryStore::scan or
// serve's History::scan call a callback per sample) as a SampleSource (which
// the diagnosis pulls from): the producer runs on a thread of its own and
// hands samples over through a bounded queue, so `report --findings --db`
// and serve's /api/v1/usage judge a week of history without holding it in
// memory.
#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "diagnose/engine.h"

namespace gd {

class PushedSampleSource : public SampleSource {
 public:
  // Called with the per-sample callback; pushes samples in time order until
  // the callback returns false. The callback takes the sample it gets (a
  // history scan's own copy), leaving in its place one the reader is done
  // with (or an empty one), whose storage the producer may reuse. May throw
  // (rethrown by next()).
  using Producer =
      std::function<void(const std::function<bool(Sample&)>& push)>;
  // Each sample is also passed to `on_sample` (the accountant) on the way.
  PushedSampleSource(Producer producer,
                     std::function<void(const Sample&)> on_sample);
  // Stops the producer if the reader stopped early.
  ~PushedSampleSource() override;

  // Rethrows what the producer threw.
  bool next(Sample& out) override;

 private:
  // Samples waiting for the reader: a few seconds of 8 GPUs at 1 Hz.
  static constexpr size_t kMaxQueued = 64;
  // Handed over this many at a time: one lock and one wake-up per batch on
  // each side, not per sample (a week is ~100,000 samples).
  static constexpr size_t kBatch = 16;

  // Samples the reader is done with, handed back to the producer for their
  // storage (a scan decodes into it: no allocation per sample); at most
  // this many wait, the rest are freed.
  static constexpr size_t kMaxSpare = kMaxQueued + 2 * kBatch;

  std::mutex mu_;
  std::condition_variable changed_;
  std::deque<Sample> queue_;
  std::deque<Sample> taken_;      // the reader's, without the lock
  std::vector<Sample> read_;      // the reader's, done with: to hand back
  std::vector<Sample> returned_;  // handed back, under the lock
  bool done_ = false, stop_ = false;
  std::exception_ptr error_;
  std::function<void(const Sample&)> on_sample_;
  std::thread producer_;
};

}  // namespace gd
