// Worker threads with a bounded queue shared fairly between keys (client
// addresses): the next job taken is the oldest of the next key in turn, so
// one client with many jobs waiting cannot make another wait behind all of
// them. Used for basic-auth password checks (bcrypt), which an
// unauthenticated client can ask for at will: a wrong-password flood from
// one address then delays a login from another by one check per address
// waiting, not by the flood's length. With one key it is a plain bounded
// queue: BoundedPool (serve/bounded_pool.h) is that.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace gd {

class FairPool {
 public:
  // Called once: on a worker thread with cancelled = false, or with
  // cancelled = true when the job was pushed out by another key's (see
  // try_submit) or the pool stopped (it must still finish its request).
  using Job = std::function<void(bool cancelled)>;

  FairPool(size_t threads, size_t max_waiting, size_t max_waiting_per_key);
  ~FairPool();
  FairPool(const FairPool&) = delete;
  FairPool& operator=(const FairPool&) = delete;

  // False (and `job` is not kept) when `key` already has
  // max_waiting_per_key jobs waiting, or when all max_waiting slots are
  // taken and no other key has more jobs waiting than `key`. When they are
  // all taken but another key has more, that key's newest job is cancelled
  // to make room: a new client always gets a place.
  bool try_submit(const std::string& key, Job job);
  // Running jobs finish; waiting ones are called with cancelled = true.
  void stop();

 private:
  void work();
  // The key with the most jobs waiting (mu_ held; waiting_ not empty).
  std::map<std::string, std::deque<Job>>::iterator fullest();

  const size_t max_waiting_;
  const size_t max_per_key_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, std::deque<Job>> waiting_;  // never an empty deque
  std::deque<std::string> turn_;  // keys of waiting_, next to run first
  size_t count_ = 0;              // jobs in waiting_
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace gd
