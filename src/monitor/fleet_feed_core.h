// What every fleet feed shares (fleet_feed.h's Prometheus rounds,
// serve_fleet_feed.h's serves): the newest frame handed to the screen, the
// eventfd that wakes it, and the requests the screen makes of the feed's
// thread (refresh now, open or close a node, stop), with the wait between
// rounds that they cut short.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "monitor/fleet_frame.h"

namespace gd::monitor {

class FleetFeedCore : public FleetSource {
 public:
  // Publishes an empty frame with `source` and `interval_s`. Throws
  // std::runtime_error when no eventfd can be made.
  FleetFeedCore(const std::string& source, double interval_s);
  ~FleetFeedCore() override;
  FleetFeedCore(const FleetFeedCore&) = delete;
  FleetFeedCore& operator=(const FleetFeedCore&) = delete;

  void refresh() override;
  void open(const std::string& node) override;
  void close() override;
  std::shared_ptr<const FleetFrame> latest() const override;
  int wake_fd() const override { return wake_fd_; }
  void drain_wake() override;

 protected:
  using Clock = std::chrono::steady_clock;

  // Numbers `f` and makes it the newest; wakes the screen.
  void publish(std::shared_ptr<FleetFrame> f);
  // Tells the feed's thread to end (its wait returns at once).
  void ask_to_stop();
  // The feed's thread between rounds: waits until `next`, or until the
  // screen asks for something. False: stop. `due`: a round is due (the
  // time came, or a refresh was asked); otherwise only the open node
  // changed.
  bool wait_for_next(Clock::time_point next, bool& due);
  // The node the screen has open, if any.
  std::optional<std::string> open_node() const;

 private:
  int wake_fd_ = -1;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::shared_ptr<const FleetFrame> latest_;
  uint64_t seq_ = 0;
  bool stopping_ = false, refresh_ = false, open_changed_ = false;
  std::optional<std::string> open_;
};

}  // namespace gd::monitor
