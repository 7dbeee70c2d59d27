// The nodes of a fleet, from the series API: every node that has a GPU
// series (DCGM_FI_DEV_GPU_UTIL, as dcgm-exporter and serve export it) in a
// time range, named by the join rule of node_match.h. For looping
// diagnose over a fleet.
#pragma once

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

}  // namespace gd::promsource
