#include "serve/fair_pool.h"

#include <algorithm>

namespace gd {

FairPool::FairPool(size_t threads, size_t max_waiting,
                   size_t max_waiting_per_key)
    : max_waiting_(max_waiting), max_per_key_(max_waiting_per_key) {
  for (size_t i = 0; i < threads; ++i)
    threads_.emplace_back([this] { work(); });
}

FairPool::~FairPool() { stop(); }

std::map<std::string, std::deque<FairPool::Job>>::iterator FairPool::fullest() {
  return std::max_element(waiting_.begin(), waiting_.end(),
                          [](const auto& a, const auto& b) {
                            return a.second.size() < b.second.size();
                          });
}

bool FairPool::try_submit(const std::string& key, Job job) {
  Job pushed_out;
  {
    std::lock_guard lock(mu_);
    if (stopping_) return false;
    auto mine = waiting_.find(key);
    const size_t have = mine == waiting_.end() ? 0 : mine->second.size();
    if (have >= max_per_key_) return false;
    if (count_ >= max_waiting_) {
      auto other = fullest();
      if (other->second.size() <= have + 1) return false;
      pushed_out = std::move(other->second.back());
      other->second.pop_back();
      --count_;  // `other` keeps a job: it had more than `have` + 1 >= 1
    }
    if (mine == waiting_.end()) {
      mine = waiting_.emplace(key, std::deque<Job>()).first;
      turn_.push_back(key);
    }
    mine->second.push_back(std::move(job));
    ++count_;
  }
  cv_.notify_one();
  if (pushed_out) pushed_out(true);
  return true;
}

void FairPool::stop() {
  std::map<std::string, std::deque<Job>> cancelled;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    cancelled.swap(waiting_);
    turn_.clear();
    count_ = 0;
  }
  cv_.notify_all();
  for (auto& [key, jobs] : cancelled)
    for (auto& job : jobs) job(true);
  for (auto& t : threads_)
    if (t.joinable()) t.join();
}

void FairPool::work() {
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !turn_.empty(); });
      if (turn_.empty()) return;  // stopping
      const std::string key = std::move(turn_.front());
      turn_.pop_front();
      auto it = waiting_.find(key);
      job = std::move(it->second.front());
      it->second.pop_front();
      --count_;
      if (it->second.empty())
        waiting_.erase(it);
      else
        turn_.push_back(key);  // its next job after the other keys'
    }
    job(false);
  }
}

}  // namespace gd
