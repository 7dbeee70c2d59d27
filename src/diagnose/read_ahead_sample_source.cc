#include "diagnose/read_ahead_sample_source.h"

#include <utility>

namespace gd {

ReadAheadSampleSource::ReadAheadSampleSource(SampleSource& inner, size_t depth)
    : inner_(inner), depth_(depth < 1 ? 1 : depth) {
  reader_ = std::thread([this] { read_loop(); });
}

ReadAheadSampleSource::~ReadAheadSampleSource() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  room_free_.notify_all();
  reader_.join();
}

void ReadAheadSampleSource::read_loop() {
  Sample buf;
  for (;;) {
    {
      std::unique_lock lock(mu_);
      // Once full, wait until half is taken: one wake-up per batch.
      if (ready_.size() >= depth_) {
        reader_waits_ = true;
        room_free_.wait(
            lock, [&] { return stopping_ || ready_.size() <= depth_ / 2; });
        reader_waits_ = false;
      }
      if (stopping_) return;
      if (!spare_.empty()) {
        buf = std::move(spare_.back());
        spare_.pop_back();
      }
    }
    bool more = false;
    std::exception_ptr error;
    try {
      more = inner_.next(buf);
    } catch (...) {
      error = std::current_exception();
    }
    bool wake = false;
    {
      std::lock_guard lock(mu_);
      if (more && !error) ready_.push_back(std::move(buf));
      if (!more || error) {
        done_ = true;
        error_ = error;
      }
      wake = consumer_waits_ && (done_ || ready_.size() >= batch());
    }
    if (wake) sample_ready_.notify_one();
    if (!more || error) return;
  }
}

bool ReadAheadSampleSource::next(Sample& out) {
  std::unique_lock lock(mu_);
  consumer_waits_ = true;
  if (ready_.empty())
    sample_ready_.wait(lock, [&] { return done_ || ready_.size() >= batch(); });
  consumer_waits_ = false;
  if (ready_.empty()) {
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
    return false;
  }
  std::swap(out, ready_.front());
  // The caller's previous sample goes back to the reader as storage.
  if (spare_.size() < depth_) spare_.push_back(std::move(ready_.front()));
  ready_.pop_front();
  bool wake = reader_waits_ && ready_.size() <= depth_ / 2;
  lock.unlock();
  if (wake) room_free_.notify_one();
  return true;
}

}  // namespace gd
