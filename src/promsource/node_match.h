// Which series belong to one node of the fleet, as PromQL selectors.
//
// The rule (docs/fleet.md): a GPU series belongs to node N when its
// `Hostname` label (set by dcgm-exporter) is N, or, when it has no
// `Hostname` label (serve's own series), when the host part of its
// `instance` label (the scrape target, "N:9400") is N. A node_exporter
// series belongs to N when the host part of its `instance` is N.
#pragma once

#include <string>

namespace gd::promsource {

// Longest node name: a DNS name.
inline constexpr size_t kMaxNodeChars = 253;

// Throws std::invalid_argument with one line unless `node` is a host name
// or IPv4 address (letters, digits, '.', '-', '_'): the name goes into
// PromQL, so nothing else may.
void check_node_name(const std::string& node);

// instance=~"N(:[0-9]+)?", the node's instance matcher; `node` checked.
std::string instance_matcher(const std::string& node);

// `metric` of the node: the series with its Hostname, or without one and
// with its instance.
std::string gpu_query(const std::string& metric, const std::string& node);

// The node a GPU series' labels name ("" none), by the rule above.
std::string node_of(const std::string& hostname, const std::string& instance);

}  // namespace gd::promsource
