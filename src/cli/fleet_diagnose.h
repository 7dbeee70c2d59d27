// diagnose --prometheus URL: every node of a fleet (promsource/fleet_nodes.h)
// read from its Prometheus and diagnosed by the same engine, one report per
// node, then a fleet summary (views/fleet_report.h). fleet_diagnose.cc runs
// it in gpudoctor-full; fleet_diagnose_exec.cc, in the lean gpudoctor, hands
// the command line over to gpudoctor-full.
#pragma once

#include <string>

#include "cli/fleet_plan.h"
#include "cli/prometheus_flags.h"
#include "diagnose/engine.h"

namespace gd {

// Without --since: the last hour (FleetFlags::window_s).
struct FleetDiagnoseFlags : FleetFlags {
  bool json = false;
  std::string html;  // --html FILE: the fleet as one HTML page, "" for none
};

// The exit status: the worst node's (diagnose_exit_code), or
// kExitCouldNotDiagnose when no node could be checked. Throws
// CLI::ValidationError for a bad flag.
int diagnose_fleet(const FleetDiagnoseFlags& f, const DiagnoseOptions& options);

}  // namespace gd
