// The samples of serve's history (HistoryStore::scan, which pushes them to a
// callback) as a SampleSource (which the diagnosis pulls from): the scan
// runs on a thread of its own and hands samples over through a bounded
// queue, so `report --findings --db` judges a week of history without
// holding it in memory.
#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

#include "diagnose/engine.h"
#include "store/history_store.h"

namespace gd {

class HistoryScanSource : public SampleSource {
 public:
  // Samples with since <= t <= until, each also passed to `on_sample` (the
  // accountant) on the way; `read` gets the scan's report when it ends.
  HistoryScanSource(const HistoryStore& store, double since, double until,
                    std::function<void(const Sample&)> on_sample,
                    ReadReport* read);
  // Stops the scan if the reader stopped early.
  ~HistoryScanSource() override;

  // Rethrows what the scan threw.
  bool next(Sample& out) override;

 private:
  // Samples waiting for the reader: a few seconds of 8 GPUs at 1 Hz.
  static constexpr size_t kMaxQueued = 64;

  std::mutex mu_;
  std::condition_variable changed_;
  std::deque<Sample> queue_;
  bool done_ = false, stop_ = false;
  std::exception_ptr error_;
  std::function<void(const Sample&)> on_sample_;
  std::thread scanner_;
};

}  // namespace gd
