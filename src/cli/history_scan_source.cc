#include "cli/history_scan_source.h"

namespace gd {

HistoryScanSource::HistoryScanSource(
    const HistoryStore& store, double since, double until,
    std::function<void(const Sample&)> on_sample, ReadReport* read)
    : on_sample_(std::move(on_sample)) {
  scanner_ = std::thread([this, &store, since, until, read] {
    try {
      store.scan(
          since, until,
          [this](const Sample& s) {
            std::unique_lock lock(mu_);
            changed_.wait(
                lock, [this] { return stop_ || queue_.size() < kMaxQueued; });
            if (stop_) return false;
            queue_.push_back(s);
            changed_.notify_all();
            return true;
          },
          read);
    } catch (...) {
      std::lock_guard lock(mu_);
      error_ = std::current_exception();
    }
    std::lock_guard lock(mu_);
    done_ = true;
    changed_.notify_all();
  });
}

HistoryScanSource::~HistoryScanSource() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
    changed_.notify_all();
  }
  scanner_.join();
}

bool HistoryScanSource::next(Sample& out) {
  std::unique_lock lock(mu_);
  changed_.wait(lock, [this] { return done_ || !queue_.empty(); });
  if (queue_.empty()) {
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
    return false;
  }
  out = std::move(queue_.front());
  queue_.pop_front();
  changed_.notify_all();
  lock.unlock();
  if (on_sample_) on_sample_(out);
  return true;
}

}  // namespace gd
