// The fleet's nodes as rows, the worst first: each node's status (ok,
// stale, gone, refused) and age, its worst finding and how many, and the
// rank that orders them. Pure, from a FleetFrame (fleet_frame.h), so that
// every surface of the fleet (top's screen, serve's /api/v1/fleet and its
// Fleet page) gives the same figures and the same order for the same frame.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "monitor/fleet_frame.h"

namespace gd::monitor {

// A node whose newest GPU sample is older than this (or 3 intervals, when
// longer) is stale: its values are shown greyed with their age.
inline constexpr double kFleetStaleS = 60;
// That age for `f`: kFleetStaleS, or 3 of its intervals when longer.
double fleet_stale_after_s(const FleetFrame& f);

enum class NodeStatus {
  kOk,
  kStale,    // its newest sample is old
  kGone,     // no longer listed (nothing within Prometheus' lookback)
  kRefused,  // its series were refused (promsource's bounds)
};

// "ok", "stale", "gone", "refused".
const char* node_status_name(NodeStatus s);

struct FleetRow {
  const FleetNodeState* node = nullptr;
  NodeStatus status = NodeStatus::kOk;
  double age_s = 0;  // now - its newest sample
  // The worst finding ("" none) and how many the node has.
  std::string worst_id, worst_severity;
  size_t findings = 0;
  int rank = 0;  // larger is worse
};

// The rows of `f` at wall time `now`, the worst first (then by most
// findings, then by name); only the nodes whose name or a finding id holds
// `filter` (case-insensitive).
std::vector<FleetRow> fleet_rows(const FleetFrame& f, const std::string& filter,
                                 double now);

}  // namespace gd::monitor
