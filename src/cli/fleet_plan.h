// What every command over a fleet's Prometheus does first and around each
// node (diagnose --prometheus, report --prometheus): the flags checked, the
// window, the nodes listed with their node_exporter aliases, then the nodes
// read by a bounded pool of workers, one window in memory each.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "cli/prometheus_flags.h"
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

// Calls fn(i, client) for every node from up to `concurrency` threads, each
// with its own client; nodes are handed out in order. `read` is the fleet's
// shared read-path choice (read_node.h); its fallback is said on stderr
// once, after the last node, for `command`.
void for_each_node(
    const FleetPlan& plan, int concurrency, promsource::ReadChoice& read,
    const char* command,
    const std::function<void(size_t, const http::prom::Client&)>& fn);

}  // namespace gd
