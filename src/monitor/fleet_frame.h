// The frames of `top --prometheus` (fleet_feed.h makes them): every node
// of the fleet with its one sample, when it was last scraped, and what the
// point-in-time rules judged; and the source the screen takes them from
// (header-only, so that the screen's library links no HTTP client).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "check/check.h"
#include "promsource/fleet_state.h"

namespace gd::monitor {

struct FleetNodeState {
  promsource::FleetNode data;  // the last round's that listed it
  // In the newest round; false: not listed since (its series ended or
  // are older than the lookback), its values are the last ones.
  bool listed = true;
  double listed_at = 0;  // the round that last listed it
  check::Result judged;  // of data.sample
};

struct FleetFrame {
  uint64_t seq = 0;
  std::string source;  // the URL
  double interval_s = 5;
  double t = 0;        // the newest round's time; 0 before the first
  double round_s = 0;  // how long it took
  std::string error;   // the newest round failed ("": it did not)
  size_t nodes_left_out = 0;
  std::vector<FleetNodeState> nodes;  // by name
};

// Where the screen takes fleet frames from: the newest whenever it likes,
// woken (wake_fd readable) when there is a new one.
class FleetSource {
 public:
  virtual ~FleetSource() = default;
  virtual void start() = 0;
  virtual void stop() = 0;
  // Asks for a round now (r on the screen).
  virtual void refresh() = 0;
  virtual std::shared_ptr<const FleetFrame> latest() const = 0;
  virtual int wake_fd() const = 0;
  virtual void drain_wake() = 0;
};

}  // namespace gd::monitor
