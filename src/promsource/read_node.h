// One node's window read from a Prometheus: every entry of the series table
// asked for (series_table.h), its answers joined into a NodeWindow.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "http_client/cancel.h"
#include "http_client/prometheus_api.h"
#include "promsource/node_match.h"
#include "promsource/node_window.h"

namespace gd::promsource {

struct NodeQuery {
  std::string node;
  double start = 0, end = 0, step_s = 15;
  // node_match.h's NodeSelector: the node's other instance hosts
  // (node_aliases) and --node-label.
  std::vector<std::string> instance_hosts;
  std::string node_label;
};

// How a node's GPU series are read (--read): remote read (one request per
// node, the raw chunks streamed, no evaluation on the server), query_range
// (the table's entries evaluated a batch per query, query_batches.h), or
// remote read while the server answers it. The host entries are PromQL
// (rates, sums) and always go through query_range.
enum class ReadPath { kAuto, kRemoteRead, kQueryRange };

// One fleet's choice, shared by its workers: with kAuto, the first node
// whose remote read the server refuses (VictoriaMetrics has none) turns
// every later node to query_range, and the reason is kept for the user.
class ReadChoice {
 public:
  explicit ReadChoice(ReadPath path) : path_(path) {}
  ReadPath path() const { return path_; }
  bool remote() const;
  void refused(const std::string& why);
  // "" unless kAuto fell back: why the server refused remote read.
  std::string fallback() const;

 private:
  ReadPath path_;
  mutable std::mutex mu_;
  std::string refused_;
};

// The window of `q.node`; throws std::runtime_error with one line when the
// server cannot answer (or std::invalid_argument for a bad node or range).
NodeWindow read_node(const http::prom::Client& client, const NodeQuery& q,
                     ReadChoice& read, http::RequestCancel& cancel);

// The rate window for counters at `step_s`: four steps, at least a minute,
// so a counter scraped every 15-30 s has points enough in each.
std::string rate_window(double step_s);

// Entry `e`'s PromQL for `node`: a GPU entry's metric with the node's
// selector; in a host entry, $I is the node's host_matcher, $W the rate
// window and $S(metric) serve's series of the node (by Hostname, as GPU
// series are).
std::string query_of(const Entry& e, const NodeSelector& node, double step_s);

}  // namespace gd::promsource
