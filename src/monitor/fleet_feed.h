// `top --prometheus URL`: the fleet, live. On its own thread, every
// interval, one round of batched instant queries for every node
// (promsource/fleet_state.h), each node's one sample judged by the rules
// that judge a point in time (check's: diagnose's one-sample rules and
// check's own judges, node-wide) and its last 10 minutes of scrapes by
// diagnose's rules (fleet_windows.h; read whole once, after the first
// round), published as a FleetFrame; the screen takes the newest and never
// waits on the server. A round is bounded by
// one deadline; a node the round does not list (nothing scraped in
// Prometheus' 5-minute lookback) keeps its last values, marked as not
// answering, so a refresh never waits on the slowest node.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "http_client/cancel.h"
#include "http_client/prometheus_api.h"
#include "monitor/fleet_feed_core.h"
#include "monitor/fleet_frame.h"
#include "monitor/fleet_windows.h"
#include "promsource/fleet_state.h"

namespace gd::monitor {

struct FleetFeedOptions {
  std::string source;  // shown in the header
  std::string match;   // a checked --match ("" all)
  double interval_s = 5;
  double round_deadline_s = 10;  // one round's requests, all together
};

// Nodes kept that no round lists any more, at most (the oldest go first).
inline constexpr size_t kMaxGoneNodes = 256;

// The next frame's nodes: `round`'s (each judged), and the nodes of `prev`
// it does not list, kept as not listed (no more than kMaxGoneNodes). Pure,
// for the tests.
std::vector<FleetNodeState> merge_round(const std::vector<FleetNodeState>& prev,
                                        promsource::FleetState&& round);

// `nodes` with the nodes of `recent` (node -> newest sample time, from
// promsource's read_recent_nodes) that it does not hold, as no longer
// listed, without values (no more than kMaxGoneNodes such nodes in all).
// Pure, for the tests.
std::vector<FleetNodeState> add_recent(
    std::vector<FleetNodeState> nodes,
    const std::map<std::string, double>& recent);

class FleetFeed : public FleetFeedCore {
 public:
  FleetFeed(http::prom::Client client, FleetFeedOptions options);
  ~FleetFeed() override;
  FleetFeed(const FleetFeed&) = delete;
  FleetFeed& operator=(const FleetFeed&) = delete;

  void start() override;
  // Ends a request in flight at once.
  void stop() override;
  // The node view (open/close, FleetFeedCore's): its processes from
  // serve's gpudoctor_process_* series, one instant query for that node
  // only, on the feed's thread (now, and with each round while it stays
  // open).

 private:
  void run();
  void round();
  // The open node's processes, asked and published with the newest frame.
  void read_open_processes();
  // Once, after the first round: the nodes that stopped answering before.
  void add_recent_nodes();
  // Once, after the first round: each node's window from its last 10
  // minutes (promsource/fleet_history.h); true when a round is due to
  // judge them (all read, or part of them: the frame then says why not
  // all), false when none were asked for.
  bool fill_windows();

  http::prom::Client client_;
  FleetFeedOptions options_;
  std::vector<promsource::QueryBatch> batches_;
  FleetWindows windows_;  // the feed thread's
  // FleetFrame::window_note, the feed thread's.
  std::string window_note_ = "reading each node's last 10 minutes";
  http::RequestCancel cancel_;
  FleetProcesses processes_;  // the feed thread's: the open node's last
  std::thread thread_;
};

}  // namespace gd::monitor
