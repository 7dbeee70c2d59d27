// report --prometheus URL: every node of a fleet read from its Prometheus
// (as diagnose --prometheus reads it), accounted by the same engine, the
// nodes' accounts merged (accounting/fleet_merge.h). In gpudoctor-full.
#pragma once

#include <string>
#include <vector>

#include "accounting/account.h"
#include "accounting/accountant.h"
#include "cli/fleet_plan.h"

namespace gd {

struct FleetReportFlags : FleetFlags {
  FleetReportFlags() { window_s = 86400; }  // without --since: the last day
  bool findings = false;  // diagnose each node too, give groups findings
};

struct FleetReport {
  accounting::AccountReport report;
  size_t nodes = 0;  // listed
  // Nodes that could not be read, "node: why" each.
  std::vector<std::string> not_checked;
};

FleetReport report_fleet(const FleetReportFlags& f,
                         const accounting::AccountOptions& options);

}  // namespace gd
