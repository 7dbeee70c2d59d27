// diagnose --prometheus: each node's report and the fleet summary after
// them (text and JSON). The node outcomes are data; this formats them.
#pragma once

#include <string>
#include <vector>

#include "diagnose/engine.h"

namespace gd {

struct FleetNodeOutcome {
  std::string node;
  bool checked = false;
  std::string why_not;  // when !checked: the server's or the window's error
  int exit_code = 0;    // diagnose_exit_code when checked
  std::vector<Finding> findings;
  std::vector<NotJudged> not_judged;
};

// Most nodes named as the worst in the summary.
inline constexpr size_t kFleetWorstShown = 5;

// "== NODE ==" then the node's report (`report_text`, a format_text_report)
// or "could not check: WHY". Node and reason pass the terminal sanitiser.
std::string format_fleet_node_text(const FleetNodeOutcome& node,
                                   const std::string& report_text);

// The summary: nodes checked, nodes not checked (each with why), findings
// by id (how many nodes), the worst nodes, rules not judged (how many nodes,
// each reason).
std::string format_fleet_summary_text(
    const std::vector<FleetNodeOutcome>& nodes);

// {"node": N, "report": {...}} or {"node": N, "error": WHY}.
std::string format_fleet_node_json(const FleetNodeOutcome& node,
                                   const std::string& report_json);
// {"checked": n, "not_checked": [{"node","error"}], "findings": [{"id",
// "nodes"}], "worst": [{"node","exit_code","findings"}], "not_judged":
// [{"id","reason","nodes"}]}
std::string format_fleet_summary_json(
    const std::vector<FleetNodeOutcome>& nodes);

}  // namespace gd
