#include "serve/bounded_pool.h"

namespace gd {

BoundedPool::BoundedPool(size_t threads, size_t max_waiting)
    : max_waiting_(max_waiting) {
  for (size_t i = 0; i < threads; ++i)
    threads_.emplace_back([this] { work(); });
}

BoundedPool::~BoundedPool() { stop(); }

bool BoundedPool::try_submit(Job job) {
  {
    std::lock_guard lock(mu_);
    if (stopping_ || waiting_.size() >= max_waiting_) return false;
    waiting_.push_back(std::move(job));
  }
  cv_.notify_one();
  return true;
}

void BoundedPool::stop() {
  std::deque<Job> cancelled;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    cancelled.swap(waiting_);
  }
  cv_.notify_all();
  for (auto& job : cancelled) job(true);
  for (auto& t : threads_)
    if (t.joinable()) t.join();
}

void BoundedPool::work() {
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !waiting_.empty(); });
      if (waiting_.empty()) return;  // stopping
      job = std::move(waiting_.front());
      waiting_.pop_front();
    }
    job(false);
  }
}

}  // namespace gd
