// The fleet's last minutes, read once when `top --prometheus` (or serve's
// Fleet page) starts, so that each node's window rules judge the last 10
// minutes from the first screens on instead of the scrapes seen since:
// the round's batched queries (fleet_state.h) asked as range queries, in
// slices of time, each slice's answers filed into each node's scrapes and
// handed on. A slice's reply is at most kFleetHistorySliceSteps times a
// round's points, and every reply stays within the client's bounds.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "http_client/cancel.h"
#include "http_client/prometheus_api.h"
#include "promsource/fleet_state.h"
#include "promsource/query_batches.h"

namespace gd::promsource {

// The grid: dcgm-exporter's default scrape interval (a node scraped more
// often gives one sample per step, one scraped less often one per scrape).
inline constexpr double kFleetHistoryStepS = 15;
// Grid steps a slice asks for.
inline constexpr size_t kFleetHistorySliceSteps = 5;

// The nodes' scrapes in (end - span_s, end] on a grid of step_s ending at
// `end`, all slices within `deadline_s`: each slice's nodes handed to
// `each_slice` (oldest first; a scrape at a slice's seam may come in both)
// and dropped, so that no more than one slice is held whole. Returns why
// the history could not be read whole ("": it was).
std::string read_fleet_history(
    const http::prom::Client& client, const std::vector<QueryBatch>& batches,
    double end, double span_s, double step_s, double deadline_s,
    http::RequestCancel& cancel,
    const std::function<void(std::vector<NodeHistory>&&)>& each_slice);

}  // namespace gd::promsource
