#include "pods/pod_directory.h"

namespace gd::pods {

PodDirectory::PodDirectory(PodSockets sockets,
                           std::chrono::milliseconds deadline,
                           std::chrono::milliseconds refresh)
    : sockets_(std::move(sockets)), deadline_(deadline), refresh_(refresh) {
  if (sockets_.any()) worker_ = std::thread([this] { run(); });
}

PodDirectory::~PodDirectory() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
}

PodDirectory::Reading PodDirectory::latest() const {
  std::lock_guard lock(mu_);
  return latest_;
}

PodDirectory::Reading PodDirectory::first(Clock::time_point until) const {
  std::unique_lock lock(mu_);
  if (!sockets_.any()) return latest_;
  cv_.wait_until(lock, until, [this] { return latest_.snapshot || stop_; });
  return latest_;
}

void PodDirectory::run() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    lock.unlock();
    auto snapshot =
        std::make_shared<const PodSnapshot>(library_.read(sockets_, deadline_));
    const auto at = Clock::now();
    lock.lock();
    // A reading where either service failed keeps the last good one (its
    // age says how old); the first one is published whatever it says.
    const bool failed =
        !snapshot->kubelet_error.empty() || !snapshot->runtime_error.empty();
    if (!latest_.snapshot || !failed) latest_ = {std::move(snapshot), at};
    cv_.notify_all();
    cv_.wait_for(lock, refresh_, [this] { return stop_; });
  }
}

}  // namespace gd::pods
