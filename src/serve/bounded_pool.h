// A few worker threads with a short queue, for requests too slow for the
// HTTP event loop (/api/v1/history reads SQLite). A full queue refuses the
// job at once, so the caller can answer 503 instead of piling up work that
// a flood of slow requests would otherwise make unbounded.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace gd {

class BoundedPool {
 public:
  // Called once on a worker thread; `cancelled` is true when the pool
  // stopped before the job could run (it must still finish its request).
  using Job = std::function<void(bool cancelled)>;

  BoundedPool(size_t threads, size_t max_waiting);
  ~BoundedPool();
  BoundedPool(const BoundedPool&) = delete;
  BoundedPool& operator=(const BoundedPool&) = delete;

  // False (and `job` is not kept) when max_waiting jobs already wait.
  bool try_submit(Job job);
  // Running jobs finish; waiting ones are called with cancelled = true.
  void stop();

 private:
  void work();

  const size_t max_waiting_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> waiting_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace gd
