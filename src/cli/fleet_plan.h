// What every command over a fleet's Prometheus does first and around each
// node (diagnose --prometheus, report --prometheus): the flags checked, the
// window, the nodes listed with their node_exporter aliases, then the nodes
// read by a bounded pool of workers, one window in memory each.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "cli/prometheus_flags.h"
#include "http_client/cancel.h"
#include "http_client/prometheus_api.h"
#include "promsource/read_node.h"

namespace gd {

// Nodes read at once: at least one, at most this many.
inline constexpr int kMaxFleetConcurrency = 64;

// The flags of a command over a fleet's Prometheus.
struct FleetFlags {
  PrometheusFlags prom;    // server, credentials, --since/--until, --step
  double window_s = 3600;  // without --since: this long before --until
  std::string match;       // --match '{...}', "" for every node
  int concurrency = 4;     // nodes in parallel, one window in memory each
  // --node-timeout: one node's requests all together; --timeout: the whole
  // command's reading of nodes. A node that runs out is not checked.
  double node_timeout_s = 600;
  double timeout_s = 3600;
};

// --node-timeout and --timeout: at least a second, at most a day.
inline constexpr double kMinFleetTimeoutS = 1;
inline constexpr double kMaxFleetTimeoutS = 86400;

// One node's turn: the cancel its requests are given, which its deadline
// or the fleet's ends.
class NodeTurn {
 public:
  http::RequestCancel& cancel() { return cancel_; }
  // "" while the node's time lasts, else why it was ended (one line).
  std::string ran_out() const;

 private:
  friend class FleetDeadlines;
  http::RequestCancel cancel_;
  mutable std::mutex mu_;
  std::string ran_out_;
};

struct FleetPlan {
  http::Url url;
  http::Credentials who;
  TimeWindow window;
  std::vector<std::string> nodes;
  // Nodes whose node_exporter is scraped at an address (node_match.h).
  std::map<std::string, std::vector<std::string>> aliases;
};

// Throws CLI::ValidationError for a bad flag, std::runtime_error when the
// server has no GPU series in the window (or cannot be asked).
FleetPlan plan_fleet(const FleetFlags& f);

// Node i's query.
promsource::NodeQuery node_query(const FleetPlan& plan, size_t i,
                                 const PrometheusFlags& prom);

// Calls fn(i, client, turn) for every node from up to `f.concurrency`
// threads, each with its own client; nodes are handed out in order. Each
// node's turn is cancelled when --node-timeout or --timeout runs out (its
// requests then fail, and turn.ran_out() says why); a node whose turn comes
// after --timeout ran out is handed to `skipped` with why instead. `read`
// is the fleet's shared read-path choice (read_node.h); its fallback is
// said on stderr once, after the last node, for `command`.
void for_each_node(
    const FleetPlan& plan, const FleetFlags& f, promsource::ReadChoice& read,
    const char* command,
    const std::function<void(size_t, const http::prom::Client&, NodeTurn&)>& fn,
    const std::function<void(size_t, const std::string&)>& skipped);

}  // namespace gd
