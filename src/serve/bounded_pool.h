// A few worker threads with a short queue, for requests too slow for the
// HTTP event loop (/api/v1/history reads SQLite). A full queue refuses the
// job at once, so the caller can answer 503 instead of piling up work that
// a flood of slow requests would otherwise make unbounded.
//
// A FairPool (serve/fair_pool.h) with one key: its queue, bound, workers and
// cancellation on stop are FairPool's, and one key makes it first in, first
// out.
#pragma once

#include <cstddef>
#include <utility>

#include "serve/fair_pool.h"

namespace gd {

class BoundedPool {
 public:
  // Called once on a worker thread; `cancelled` is true when the pool
  // stopped before the job could run (it must still finish its request).
  using Job = FairPool::Job;

  // One key may hold all max_waiting places, and there is no other key to
  // push out: a full queue refuses.
  BoundedPool(size_t threads, size_t max_waiting)
      : pool_(threads, max_waiting, max_waiting) {}

  // False (and `job` is not kept) when max_waiting jobs already wait.
  bool try_submit(Job job) { return pool_.try_submit({}, std::move(job)); }
  // Running jobs finish; waiting ones are called with cancelled = true.
  void stop() { pool_.stop(); }

 private:
  FairPool pool_;
};

}  // namespace gd
