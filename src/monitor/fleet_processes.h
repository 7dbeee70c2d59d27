// The processes of the node open in the fleet's node view: from the sample
// in a serve's status reply (top --connect URL,URL,...), or from serve's
// gpudoctor_process_* series where serve runs beside dcgm-exporter (top
// --prometheus: one instant query for the open node only). Everything here
// comes from the node or the server: rows are bounded and names cut.
#pragma once

#include <string>
#include <vector>

#include "http_client/prometheus_api.h"
#include "model/sample.h"
#include "monitor/fleet_frame.h"

namespace gd::monitor {

// What the node view says where a node has only dcgm-exporter's series.
inline constexpr const char* kProcessesNotReported =
    "processes: not reported (dcgm-exporter gives none; run gpudoctor serve "
    "on the node)";

// The GPU processes of `s` (each GPU's list joined with the host's process
// by pid), at most kMaxFleetProcesses.
FleetProcesses fleet_processes_of(const std::string& node, const Sample& s);

// The instant query for `node`'s process series (and its GPUs' list sizes,
// which tell "no process" from "no serve there"). Throws
// std::invalid_argument for a name that is not a checked node name.
std::string fleet_process_query(const std::string& node);

// The rows of the query's answer (a process by GPU and pid, its memory and
// CPU series joined), or the note that the node reports none.
FleetProcesses fleet_processes_from_series(
    const std::string& node, const std::vector<http::prom::Series>& answer);

}  // namespace gd::monitor
