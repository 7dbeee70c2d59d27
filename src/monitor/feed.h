// A source of Frames for `top`, running on its own thread: the screen takes
// the newest frame whenever it likes and is woken (wake_fd becomes readable)
// when there is a new one, so it never waits on NVML, /proc, a trace or the
// network, and never polls.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "monitor/frame.h"

namespace gd::monitor {

// Replay controls (a feed that is not a replay ignores them).
enum class ReplayCommand {
  kTogglePause,
  kFaster,
  kSlower,
  kSeekBack,
  kSeekForward
};

class Feed {
 public:
  Feed();
  virtual ~Feed();
  Feed(const Feed&) = delete;
  Feed& operator=(const Feed&) = delete;

  virtual void start() = 0;
  // Returns once the feed's thread has ended (bounded by a GPU deadline or
  // a request timeout).
  virtual void stop() = 0;
  virtual void control(ReplayCommand) {}
  // Seconds a seek moves.
  static constexpr double kSeekStepS = 10;

  std::shared_ptr<const Frame> latest() const;
  // Readable when a frame was published since the last drain_wake().
  int wake_fd() const { return wake_fd_; }
  void drain_wake();
  // Wakes the screen without a new frame (a kill job's progress).
  void wake();

 protected:
  // Sets frame.seq and publishes it.
  void publish(std::shared_ptr<Frame> frame);

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const Frame> latest_;
  uint64_t seq_ = 0;
  int wake_fd_ = -1;
};

}  // namespace gd::monitor
