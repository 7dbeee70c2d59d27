#include "diagnose/pushed_sample_source.h"

#include <utility>
#include <vector>

namespace gd {

PushedSampleSource::PushedSampleSource(
    Producer producer, std::function<void(const Sample&)> on_sample)
    : on_sample_(std::move(on_sample)) {
  producer_ = std::thread([this, producer = std::move(producer)] {
    std::vector<Sample> batch;
    batch.reserve(kBatch);
    std::vector<Sample> spare;  // read samples, for their storage
    // Moves the batch into the queue once it has room; false: stop.
    auto flush = [&] {
      std::unique_lock lock(mu_);
      changed_.wait(lock, [&] {
        return stop_ || queue_.size() + batch.size() <= kMaxQueued;
      });
      if (stop_) return false;
      for (Sample& s : batch) queue_.push_back(std::move(s));
      batch.clear();
      for (Sample& s : returned_)
        if (spare.size() < kMaxSpare) spare.push_back(std::move(s));
      returned_.clear();
      changed_.notify_all();
      return true;
    };
    try {
      producer([&](Sample& s) {
        batch.emplace_back();
        if (!spare.empty()) {
          batch.back() = std::move(spare.back());
          spare.pop_back();
        }
        std::swap(batch.back(), s);
        return batch.size() < kBatch || flush();
      });
      if (!batch.empty()) flush();
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
  if (taken_.empty()) {
    std::unique_lock lock(mu_);
    changed_.wait(lock, [this] { return done_ || !queue_.empty(); });
    if (queue_.empty()) {
      if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
      return false;
    }
    taken_.swap(queue_);
    for (Sample& s : read_)
      if (returned_.size() < kMaxSpare) returned_.push_back(std::move(s));
    read_.clear();
    changed_.notify_all();
  }
  // The sample before goes back to the producer, for its storage.
  std::swap(out, taken_.front());
  if (read_.size() < kMaxSpare) read_.push_back(std::move(taken_.front()));
  taken_.pop_front();
  if (on_sample_) on_sample_(out);
  return true;
}

}  // namespace gd
