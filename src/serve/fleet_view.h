// serve --fleet-prometheus URL: the fleet beside the node. A FleetSource
// (monitor/fleet_feed.h: its own thread, one round of batched queries to the
// fleet's Prometheus every interval, each node judged) runs for the life of
// serve; a thread of this class waits on it and tells the live stream of
// each new frame (a small "fleet" event), and GET /api/v1/fleet answers
// with the newest frame (fleet_json.h). A request never waits on
// Prometheus: it reads the newest frame, rendered at most once a second.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "monitor/fleet_frame.h"
#include "serve/api.h"

namespace gd {

class EventHub;

class FleetView {
 public:
  // `events` null: no live stream (tests).
  FleetView(std::unique_ptr<monitor::FleetSource> source, EventHub* events);
  ~FleetView();
  FleetView(const FleetView&) = delete;
  FleetView& operator=(const FleetView&) = delete;

  // Starts the source and the thread that waits on it.
  void start();
  // Stops both (a round in flight ends at once).
  void stop();

  // /api/v1/fleet at wall time `now`; gzip-compressed when `gzip` (the
  // client accepts it), compressed once per body rendered.
  ApiReply reply(double now, bool gzip = false) const;

 private:
  void watch();

  std::unique_ptr<monitor::FleetSource> source_;
  EventHub* events_;
  int stop_fd_ = -1;
  std::thread thread_;
  bool started_ = false;

  // The last body rendered, for which frame and which whole second.
  mutable std::mutex mu_;
  mutable uint64_t body_seq_ = 0;
  mutable int64_t body_second_ = -1;
  mutable std::shared_ptr<const std::string> body_;
  mutable std::shared_ptr<const std::string> gzip_;  // body_ compressed
};

}  // namespace gd
