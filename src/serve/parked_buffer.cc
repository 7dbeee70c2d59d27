#include "serve/parked_buffer.h"

#include <algorithm>
#include <cstring>

namespace gd {

void ParkedBuffer::set_hooks(std::function<void()> suspend,
                             std::function<void()> resume) {
  std::lock_guard lock(mu_);
  suspend_ = std::move(suspend);
  resume_ = std::move(resume);
}

void ParkedBuffer::resume_locked() {
  if (suspended_ && resume_) {
    suspended_ = false;
    resume_();
  }
}

ParkedBuffer::Read ParkedBuffer::read(char* buf, size_t max, size_t& n) {
  std::lock_guard lock(mu_);
  n = std::min(max, buffer_.size() - offset_);
  if (n > 0) {
    std::memcpy(buf, buffer_.data() + offset_, n);
    offset_ += n;
    if (offset_ == buffer_.size()) {
      buffer_.clear();
      offset_ = 0;
    }
    room_.notify_all();
    return Read::kData;
  }
  if (failed_ || cancelled_) return Read::kError;
  if (done_) return Read::kEnd;
  if (suspend_) {
    suspend_();
    suspended_ = true;
  }
  return Read::kWait;
}

bool ParkedBuffer::put(std::string_view bytes) {
  std::unique_lock lock(mu_);
  while (!bytes.empty()) {
    room_.wait(lock, [&] {
      return cancelled_ || buffer_.size() - offset_ < max_bytes_;
    });
    if (cancelled_) return false;
    const size_t take =
        std::min(bytes.size(), max_bytes_ - (buffer_.size() - offset_));
    buffer_.append(bytes.substr(0, take));
    bytes.remove_prefix(take);
    resume_locked();
  }
  return true;
}

void ParkedBuffer::finish(bool failed) {
  std::lock_guard lock(mu_);
  done_ = true;
  failed_ = failed_ || failed;
  resume_locked();
}

void ParkedBuffer::cancel() {
  std::lock_guard lock(mu_);
  cancelled_ = true;
  suspend_ = nullptr;
  resume_ = nullptr;
  room_.notify_all();
}

void ParkedBuffer::abort() {
  std::lock_guard lock(mu_);
  cancelled_ = true;
  room_.notify_all();
  resume_locked();
}

bool ParkedBuffer::finished() const {
  std::lock_guard lock(mu_);
  return done_ || failed_ || cancelled_;
}

}  // namespace gd
