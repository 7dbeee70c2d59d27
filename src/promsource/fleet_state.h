// The fleet now, for `top --prometheus`: one round of a few batched
// instant queries for every node at once (each GPU metric of the series
// table by node and GPU, never a query per node), turned into each node's
// header and one sample by the same table and join rule as a node's window
// (node_window.h), with when the node's GPU series were last scraped.
//
// The server is untrusted: the client's bounds hold every reply, label
// values are cut where read, at most kMaxFleetNodes nodes and
// kMaxGpusPerNode GPUs a node are kept, and a node whose series break the
// bounds is kept with why instead of its values.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "http_client/cancel.h"
#include "http_client/prometheus_api.h"
#include "model/sample.h"
#include "promsource/query_batches.h"

namespace gd::promsource {

// The most nodes one round keeps (by name; the rest are counted).
inline constexpr size_t kMaxFleetNodes = 2048;
// Entries of the series table per instant query (a fleet-wide query gives
// a series per GPU of every node for each of them).
inline constexpr size_t kFleetBatchEntries = 7;
// The tag of the query that gives each GPU series' sample time.
inline constexpr size_t kLastSeenEntry = 10000;
// The tag of the query that gives each serve's scrape address: serve's own
// gpudoctor_build_info by node and `instance`, asked in the sample times'
// batch, so the round stays at the same number of queries.
inline constexpr size_t kServeInstanceEntry = 10001;
// The longest serve address kept: a DNS name, ':' and a port.
inline constexpr size_t kMaxServeInstanceChars = 253 + 6;

// The client's bounds for a round: a fleet-wide reply holds a series per
// GPU of every node for each entry of its batch.
http::prom::Limits fleet_limits(double deadline_s);

struct FleetNode {
  std::string node;  // a checked node name (node_match.h)
  // The newest sample time of its GPU series (DCGM_FI_DEV_GPU_UTIL), Unix s.
  double last_seen = 0;
  TraceHeader header;
  Sample sample;      // at the round's time; GPUs with any value
  std::string error;  // its series were refused ("": none); no values then
  // Where Prometheus scrapes the node's `gpudoctor serve` ("host:port",
  // checked by serve_instance_of; "" none: a node scraped only through
  // dcgm-exporter). Its dashboard, when serve's scrape address is the
  // dashboard's.
  std::string serve_instance;
};

// `instance` when it is a scrape address a link may be built from:
// HOST:PORT with a host of letters, digits, '.', '-' and '_' or a
// bracketed IPv6 address ([hex digits, ':' and '.']), a port of 1 to 65535,
// at most kMaxServeInstanceChars; else "".
std::string serve_instance_of(const std::string& instance);

struct FleetState {
  double t = 0;                  // when the round was evaluated
  std::vector<FleetNode> nodes;  // by name
  size_t nodes_left_out = 0;     // past kMaxFleetNodes
  // GPU series whose Hostname (or instance) is no host name (node_match.h):
  // no node of theirs is listed, so the screen says how many there were.
  size_t series_unnamed = 0;
  std::string error;  // the round failed: one line, no nodes
};

// The round's queries: the series table's GPU entries (samples and facts)
// with `match` (a checked label matcher list, "" for all) in batches tagged
// by entry (query_batches.h), and the sample times' query
// (kLastSeenEntry) with the serve addresses' one (kServeInstanceEntry) in
// the first batch.
std::vector<QueryBatch> fleet_batches(const std::string& match);

class NodeWindow;

// The state built one batch's answer at a time, each filed into its nodes'
// windows and dropped: a round holds one answer at a time, not all of them.
// The sample times' batch (fleet_batches' first) comes first.
class FleetBuilder {
 public:
  // A round: the fleet at time `t`.
  explicit FleetBuilder(double t);
  // A history (fleet_history.h): the fleet on the grid start, start + step,
  // ..., end; finish() gives each node's newest sample, finish_history()
  // each of its scrapes.
  FleetBuilder(double start, double end, double step_s);
  ~FleetBuilder();
  FleetBuilder(const FleetBuilder&) = delete;
  FleetBuilder& operator=(const FleetBuilder&) = delete;
  void add(const QueryBatch& batch, std::vector<http::prom::Series>&& answer);
  FleetState finish();
  // Each listed node's samples, one per scrape (the grid steps that found
  // the same newest scrape give one sample), each at its scrape's time.
  std::vector<struct NodeHistory> finish_history();

 private:
  void add_nodes(const std::vector<http::prom::Series>& series);
  void add_serve_instances(const std::vector<http::prom::Series>& series);
  void add_entry(size_t entry, std::vector<http::prom::Series>&& series);

  FleetState st_;
  double start_, step_;
  std::map<std::string, size_t> index_;  // node -> its place in st_.nodes
  // By node (its place in st_.nodes): grid step -> the time of the newest
  // scrape of its GPU series there.
  std::vector<std::map<long, double>> scrapes_;
  // The grid step nearest `t` (a server's times are printed to the ms).
  long grid_step(double t) const;
  std::vector<std::unique_ptr<NodeWindow>> windows_;  // null: refused
};

// A node's scrapes over a history's grid (fleet_history.h).
struct NodeHistory {
  std::string node;
  TraceHeader header;
  std::vector<Sample> samples;  // in time order, each at its scrape's time
};

// The state from each batch's answer (answers[i] answers batches[i]).
// Only nodes with a sample time are listed (a node is a node by its
// DCGM_FI_DEV_GPU_UTIL, as fleet_nodes.h lists them).
FleetState fleet_state(double t, const std::vector<QueryBatch>& batches,
                       std::vector<std::vector<http::prom::Series>>&& answers);

// Every batch asked over [from, to] at `step_s` and added to `built`, each
// request within what is left before `deadline`: "" when all were, else
// why not (`late` when the deadline came first). A round's and the start's
// read of the last minutes (fleet_history.h) alike.
std::string ask_batches(const http::prom::Client& client,
                        const std::vector<QueryBatch>& batches, double from,
                        double to, double step_s,
                        std::chrono::steady_clock::time_point deadline,
                        const std::string& late, http::RequestCancel& cancel,
                        FleetBuilder& built);

// One round at time `t` (Unix s): every batch asked, all of them within
// `deadline_s` (and the client's limits); error set when any batch cannot
// be read in time.
FleetState read_fleet(const http::prom::Client& client,
                      const std::vector<QueryBatch>& batches, double t,
                      double deadline_s, http::RequestCancel& cancel);

// How far back the nodes that no longer answer are looked for at start.
inline constexpr double kRecentWindowS = 3600;

// The nodes whose GPU series had a sample in the kRecentWindowS before the
// query's time, by their newest sample time: one subquery
// (max_over_time(timestamp(DCGM_FI_DEV_GPU_UTIL)[1h:1m])), asked once at
// start, so a node that stopped answering before `top` started is listed
// too, with its age.
std::string recent_nodes_query(const std::string& match);
// The answer as node -> newest sample time (checked names; at most
// kMaxFleetNodes, by name).
std::map<std::string, double> recent_nodes(
    const std::vector<http::prom::Series>& answer);
// Asks it at `t` within `deadline_s`; `error` set when it cannot be read.
std::map<std::string, double> read_recent_nodes(
    const http::prom::Client& client, const std::string& match, double t,
    double deadline_s, http::RequestCancel& cancel, std::string& error);

}  // namespace gd::promsource
