#include "diagnose/pushed_sample_source.h"

#include <utility>

namespace gd {

PushedSampleSource::PushedSampleSource(
    Producer producer, std::function<void(const Sample&)> on_sample)
    : on_sample_(std::move(on_sample)) {
  producer_ = std::thread([this, producer = std::move(producer)] {
    try {
      producer([this](const Sample& s) {
        std::unique_lock lock(mu_);
        changed_.wait(lock,
                      [this] { return stop_ || queue_.size() < kMaxQueued; });
        if (stop_) return false;
        queue_.push_back(s);
        changed_.notify_all();
        return true;
      });
    } catch (...) {
      std::lock_guard lock(mu_);
      error_ = std::current_exception();
    }
    std::lock_guard lock(mu_);
    done_ = true;
    changed_.notify_all();
  });
}

PushedSampleSource::~PushedSampleSource() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
    changed_.notify_all();
  }
  producer_.join();
}

bool PushedSampleSource::next(Sample& out) {
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
