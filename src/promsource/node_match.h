// Which series belong to one node of the fleet, as PromQL selectors.
//
// The rule (docs/fleet.md): a GPU series belongs to node N when its
// `Hostname` label (set by dcgm-exporter) is N, or, when it has no
// `Hostname` label (dcgm-exporter's, and serve's own), when the host part
// of its `instance` label (the scrape target, "N:9400") is N. A
// node_exporter series belongs to N when the host part of its `instance` is
// N, or is an address node_exporter's node_uname_info names N (a node
// scraped by IP), or, with --node-label L, when its label L is N.
#pragma once

#include <string>
#include <vector>

#include "http_client/prometheus_api.h"

namespace gd::promsource {

// Longest node name: a DNS name.
inline constexpr size_t kMaxNodeChars = 253;

// Throws std::invalid_argument with one line unless `node` is a host name
// or IPv4 address (letters, digits, '.', '-', '_'): the name goes into
// PromQL, so nothing else may.
void check_node_name(const std::string& node);

// Throws std::invalid_argument with one line unless `label` is a
// Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*).
void check_label_name(const std::string& label);

// Which series are one node's, by the rule above.
struct NodeSelector {
  std::string node;
  // Other hosts of `instance` that are this node (node_uname_info's
  // addresses of it); each a checked node name.
  std::vector<std::string> instance_hosts;
  std::string node_label;  // --node-label: "" for the instance rule
};

// N(:[0-9]+)?, the regular expression of the node's instances (with its
// other hosts: (N|10\\.0\\.0\\.7)(:[0-9]+)?).
std::string instance_regex(const NodeSelector& node);

// instance=~"N(:[0-9]+)?", the node's instance matcher, or with other
// instance hosts instance=~"(N|10\\.0\\.0\\.7)(:[0-9]+)?"; names checked.
std::string instance_matcher(const NodeSelector& node);
inline std::string instance_matcher(const std::string& node) {
  return instance_matcher(NodeSelector{node, {}, {}});
}

// The matcher of the node's node_exporter series: its --node-label, else
// its instance matcher.
std::string host_matcher(const NodeSelector& node);

// `metric` of the node: the series with its Hostname, or without one and
// with its instance.
std::string gpu_query(const std::string& metric, const NodeSelector& node);
inline std::string gpu_query(const std::string& metric,
                             const std::string& node) {
  return gpu_query(metric, NodeSelector{node, {}, {}});
}

// The same series as gpu_query's for each of `metrics` (names of the
// series table: [a-zA-Z_:][a-zA-Z0-9_:]*), as remote-read selectors: all
// of them in one request.
std::vector<http::prom::Selector> gpu_selectors(
    const std::vector<std::string>& metrics, const NodeSelector& node);

// The node a GPU series' labels name ("" none), by the rule above.
std::string node_of(const std::string& hostname, const std::string& instance);

// Whether a GPU series with these labels is `node`'s.
bool is_node_of(const NodeSelector& node, const std::string& hostname,
                const std::string& instance);

}  // namespace gd::promsource
