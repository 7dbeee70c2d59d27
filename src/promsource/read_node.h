// One node's window read from a Prometheus: every entry of the series table
// asked for (series_table.h), its answers joined into a NodeWindow.
#pragma once

#include <string>

#include "http_client/cancel.h"
#include "http_client/prometheus_api.h"
#include "promsource/node_window.h"

namespace gd::promsource {

struct NodeQuery {
  std::string node;
  double start = 0, end = 0, step_s = 15;
};

// The window of `q.node`; throws std::runtime_error with one line when the
// server cannot answer (or std::invalid_argument for a bad node or range).
NodeWindow read_node(const http::prom::Client& client, const NodeQuery& q,
                     http::RequestCancel& cancel);

// The rate window for counters at `step_s`: four steps, at least a minute,
// so a counter scraped every 15-30 s has points enough in each.
std::string rate_window(double step_s);

// Entry `e`'s PromQL for `node`.
std::string query_of(const Entry& e, const std::string& node, double step_s);

}  // namespace gd::promsource
