// `top --prometheus URL`: the fleet, live. On its own thread, every
// interval, one round of batched instant queries for every node
// (promsource/fleet_state.h), each node's one sample judged by the rules
// that judge a point in time (check's: diagnose's one-sample rules and
// check's own judges, node-wide) and its last scrapes by diagnose's rules
// (FleetWindows), published as a FleetFrame; the screen
// takes the newest and never waits on the server. A round is bounded by
// one deadline; a node the round does not list (nothing scraped in
// Prometheus' 5-minute lookback) keeps its last values, marked as not
// answering, so a refresh never waits on the slowest node.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
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

// Each node's distinct samples (one per scrape: a round that finds the same
// newest sample adds nothing) over the last kFleetWindowS, at most
// kFleetWindowSamples, so that the window rules of diagnose (thermal
// throttling, power capping, a PCIe link below its maximum, memory
// pressure, ...) judge a fleet too, as `diagnose --prometheus` over the
// last minutes would. Their warnings and critical findings are added to
// each node's check findings (not twice for one id and GPUs), what they
// could not judge to its not-judged list; a node's window is judged again
// only when it has a new sample.
inline constexpr double kFleetWindowS = 300;
inline constexpr size_t kFleetWindowSamples = 6;

class FleetWindows {
 public:
  // Adds each listed node's sample to its window and its window's findings
  // to node.judged; forgets the nodes not listed.
  void judge(std::vector<FleetNodeState>& nodes);
  // Samples held, all nodes together (tests, bounds).
  size_t samples() const;

 private:
  struct Window {
    std::deque<Sample> samples;
    std::vector<check::CheckFinding> findings;  // of the last judging
    std::vector<NotJudged> not_judged;
  };
  std::map<std::string, Window> windows_;
};

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

  http::prom::Client client_;
  FleetFeedOptions options_;
  std::vector<promsource::QueryBatch> batches_;
  FleetWindows windows_;  // the feed thread's
  http::RequestCancel cancel_;
  FleetProcesses processes_;  // the feed thread's: the open node's last
  std::thread thread_;
};

}  // namespace gd::monitor
