// Encoded writes waiting for the database: while the disk is full (or the
// file is read-only, or I/O fails) each batch is encoded once and waits
// here, bounded in bytes, instead of being re-encoded on every sample.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>

#include "store/block_codec.h"

namespace gd::store {

struct PendingWrite {
  bool is_block = false;  // a sealed raw block; else a batch of the open one
  double win = 0, t0 = 0, t1 = 0;
  size_t samples = 0;
  EncodedBlock enc;
  size_t bytes() const { return enc.numeric.size() + enc.rest.size(); }
};

class WriteQueue {
 public:
  explicit WriteQueue(size_t max_bytes) : max_bytes_(max_bytes) {}

  // Appends `w`, then drops the oldest writes while over the bound.
  void push(PendingWrite w) {
    bytes_ += w.bytes();
    items_.push_back(std::move(w));
    while (bytes_ > max_bytes_ && !items_.empty()) drop_front();
  }

  // Batches are only queued for the open block, so the trailing ones are
  // superseded by that block once it is sealed (it holds all their samples).
  void drop_trailing_batches() {
    while (!items_.empty() && !items_.back().is_block) {
      bytes_ -= items_.back().bytes();
      items_.pop_back();
    }
  }

  bool empty() const { return items_.empty(); }
  const PendingWrite& front() const { return items_.front(); }
  void pop_front() {
    bytes_ -= items_.front().bytes();
    items_.pop_front();
  }
  const std::deque<PendingWrite>& items() const { return items_; }
  size_t bytes() const { return bytes_; }
  uint64_t dropped_samples() const { return dropped_samples_; }

 private:
  void drop_front() {
    // A dropped batch's samples are still in the open block (written when it
    // is sealed); only a dropped block loses samples.
    if (items_.front().is_block) dropped_samples_ += items_.front().samples;
    pop_front();
  }

  size_t max_bytes_;
  size_t bytes_ = 0;
  uint64_t dropped_samples_ = 0;
  std::deque<PendingWrite> items_;
};

}  // namespace gd::store
