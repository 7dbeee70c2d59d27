// The pods of this node, kept fresh off the caller's path: a worker reads
// both services through PodsLibrary every `refresh` (each call within its
// deadline) and publishes an immutable snapshot. Callers (serve's
// collector, top's frames) take the latest at once and never wait on the
// kubelet; a hung kubelet costs the worker its deadline, and the last good
// snapshot is kept, marked stale by its age.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "pods/pods_library.h"

namespace gd::pods {

class PodDirectory {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kDeadline{1000};
  static constexpr std::chrono::seconds kRefresh{10};

  // Starts the worker when `sockets` has any; otherwise holds nothing.
  explicit PodDirectory(PodSockets sockets,
                        std::chrono::milliseconds deadline = kDeadline,
                        std::chrono::milliseconds refresh = kRefresh);
  ~PodDirectory();  // stops and joins the worker
  PodDirectory(const PodDirectory&) = delete;
  PodDirectory& operator=(const PodDirectory&) = delete;

  struct Reading {
    std::shared_ptr<const PodSnapshot> snapshot;  // nullptr: none yet
    Clock::time_point at;                         // when it was read
  };
  // The latest reading, at once.
  Reading latest() const;
  // The first reading, waiting for it until `until` (a one-shot command).
  Reading first(Clock::time_point until) const;
  bool on_kubernetes() const { return sockets_.any(); }

 private:
  void run();

  const PodSockets sockets_;
  const std::chrono::milliseconds deadline_, refresh_;
  PodsLibrary library_;  // the worker's alone
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;  // a reading published, or stop
  Reading latest_;
  bool stop_ = false;
  std::thread worker_;
};

}  // namespace gd::pods
