// diagnose --prometheus URL: every node of a fleet (promsource/fleet_nodes.h)
// read from its Prometheus and diagnosed by the same engine, one report per
// node. fleet_diagnose.cc runs it in gpudoctor-full; fleet_diagnose_exec.cc,
// in the lean gpudoctor, hands the command line over to gpudoctor-full.
#pragma once

#include <string>

#include "diagnose/engine.h"

namespace gd {

struct FleetDiagnoseFlags {
  std::string url;
  double window_s = 3600;  // the last hour
  double step_s = 15;
  bool json = false;
};

// The exit status: the worst node's (diagnose_exit_code), or
// kExitCouldNotDiagnose when no node could be read.
int diagnose_fleet(const FleetDiagnoseFlags& f, const DiagnoseOptions& options);

}  // namespace gd
