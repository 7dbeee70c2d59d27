// The nodes of a fleet, from the series API: every node that has a GPU
// series (DCGM_FI_DEV_GPU_UTIL, as dcgm-exporter and serve export it) in a
// time range, named by the join rule of node_match.h. For looping
// diagnose over a fleet.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "http_client/cancel.h"
#include "http_client/prometheus_api.h"

namespace gd::promsource {

// Sorted, each once. `match` (label_matcher.h, checked by the caller; ""
// for all) narrows the GPU series asked for. Names that are not node names
// (node_match.h's check_node_name: they could not be asked for) are left out.
// Throws std::runtime_error with one line when the server cannot answer.
std::vector<std::string> fleet_nodes(const http::prom::Client& client,
                                     double start, double end,
                                     http::RequestCancel& cancel,
                                     const std::string& match = "");

// Node name -> the other hosts its node_exporter is scraped at: from
// node_exporter's node_uname_info, whose `nodename` label is the node's
// name and whose `instance` may be an address ("10.0.0.7:9100"). Hosts and
// names that are not node names are left out; at most kMaxAliasesPerNode
// per node. Throws std::runtime_error with one line when the server cannot
// answer.
inline constexpr size_t kMaxAliasesPerNode = 8;
std::map<std::string, std::vector<std::string>> node_aliases(
    const http::prom::Client& client, double start, double end,
    http::RequestCancel& cancel);

}  // namespace gd::promsource
