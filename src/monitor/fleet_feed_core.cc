#include "monitor/fleet_feed_core.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <stdexcept>

namespace gd::monitor {

FleetFeedCore::FleetFeedCore(const std::string& source, double interval_s)
    : wake_fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  if (wake_fd_ < 0) throw std::runtime_error("eventfd failed");
  auto f = std::make_shared<FleetFrame>();
  f->source = source;
  f->interval_s = interval_s;
  publish(std::move(f));
}

FleetFeedCore::~FleetFeedCore() {
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void FleetFeedCore::refresh() {
  {
    std::lock_guard lock(mu_);
    refresh_ = true;
  }
  cv_.notify_all();
}

void FleetFeedCore::open(const std::string& node) {
  {
    std::lock_guard lock(mu_);
    if (open_ == node) return;
    open_ = node;
    open_changed_ = true;
  }
  cv_.notify_all();
}

void FleetFeedCore::close() {
  {
    std::lock_guard lock(mu_);
    if (!open_) return;
    open_.reset();
    open_changed_ = true;
  }
  cv_.notify_all();
}

std::shared_ptr<const FleetFrame> FleetFeedCore::latest() const {
  std::lock_guard lock(mu_);
  return latest_;
}

void FleetFeedCore::drain_wake() {
  uint64_t count = 0;
  [[maybe_unused]] auto n = ::read(wake_fd_, &count, sizeof count);
}

void FleetFeedCore::publish(std::shared_ptr<FleetFrame> f) {
  {
    std::lock_guard lock(mu_);
    f->seq = ++seq_;
    latest_ = std::move(f);
  }
  const uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
}

void FleetFeedCore::ask_to_stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
}

bool FleetFeedCore::wait_for_next(Clock::time_point next, bool& due) {
  std::unique_lock lock(mu_);
  const bool woken = cv_.wait_until(
      lock, next, [&] { return stopping_ || refresh_ || open_changed_; });
  if (stopping_) return false;
  due = !woken || refresh_;
  refresh_ = false;
  open_changed_ = false;
  return true;
}

std::optional<std::string> FleetFeedCore::open_node() const {
  std::lock_guard lock(mu_);
  return open_;
}

}  // namespace gd::monitor
