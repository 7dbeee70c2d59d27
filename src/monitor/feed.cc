#include "monitor/feed.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>
#include <stdexcept>

namespace gd::monitor {

Feed::Feed() : wake_fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  if (wake_fd_ < 0) throw std::runtime_error("eventfd failed");
}

Feed::~Feed() {
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

std::shared_ptr<const Frame> Feed::latest() const {
  std::lock_guard lock(mu_);
  return latest_;
}

void Feed::publish(std::shared_ptr<Frame> frame) {
  {
    std::lock_guard lock(mu_);
    frame->seq = ++seq_;
    latest_ = std::move(frame);
  }
  wake();
}

void Feed::wake() {
  const uint64_t one = 1;
  // Nonblocking: a full counter already means "wake up".
  [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
}

void Feed::drain_wake() {
  uint64_t count = 0;
  [[maybe_unused]] auto n = ::read(wake_fd_, &count, sizeof count);
}

}  // namespace gd::monitor
