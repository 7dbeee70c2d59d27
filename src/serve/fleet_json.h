// GET /api/v1/fleet: serve's view of the fleet (serve --fleet-prometheus),
// the newest FleetFrame as JSON: its nodes in the order top's fleet screen
// lists them (monitor/fleet_rows.h: the worst first), each with its status
// and age, its GPUs' util, memory, temperature and power, its findings and
// what was not judged, and its serve dashboard's address when Prometheus
// scrapes a serve there. docs/serve.md documents the fields.
//
// Bounded: the frame holds at most promsource::kMaxFleetNodes listed nodes
// (and monitor::kMaxGoneNodes gone ones) of at most kMaxGpusPerNode GPUs;
// here at most kMaxFleetFindingsShown findings a node are written (their
// count is the whole), and every text is cut to kMaxFleetText bytes.
#pragma once

#include <cstddef>
#include <string>

#include "monitor/fleet_frame.h"

namespace gd {

inline constexpr size_t kMaxFleetFindingsShown = 32;
inline constexpr size_t kMaxFleetText = 1024;

// The body of /api/v1/fleet for `f` at wall time `now` (ages and the stale
// status are as of `now`).
std::string fleet_json(const monitor::FleetFrame& f, double now);

// The dashboard's address of a node's serve ("" none): http://INSTANCE/
// of a checked instance (promsource::serve_instance_of).
std::string serve_dashboard_url(const std::string& serve_instance);

// The live stream's "fleet" event: that a new frame is out (its seq, time,
// round time, error and node count), small, so the page fetches
// /api/v1/fleet only when it shows the Fleet tab.
std::string fleet_event(const monitor::FleetFrame& f);

}  // namespace gd
