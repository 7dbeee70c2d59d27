// `gpudoctor report`: the accounting of a window (accounting/account.h) as
// a text table, JSON or CSV. Names and labels come from the trace and are
// hostile: text goes through terminal_safe, CSV cells too (one group, one
// row), JSON through its own escaping.
#pragma once

#include <string>
#include <vector>

#include "accounting/account.h"

namespace gd {

struct ReportViewOptions {
  accounting::Dimension by = accounting::Dimension::kJob;
  accounting::Prices prices;
  std::string source;  // the trace or database read (a path: untrusted)
  // The diagnosis ran (--findings): each group's findings are shown (an
  // empty list then means none, not "not looked").
  bool findings = false;
  // report --prometheus: the nodes listed, and those that could not be
  // read ("node: why"), said beside the fleet's accounts.
  size_t fleet_nodes = 0;
  std::vector<std::string> not_checked;
};

std::string report_text(const accounting::AccountReport& r,
                        const ReportViewOptions& o);
std::string report_json(const accounting::AccountReport& r,
                        const ReportViewOptions& o);
std::string report_csv(const accounting::AccountReport& r,
                       const ReportViewOptions& o);

// The GPUs of a group's mask, ascending ("0,1,3" in a cell).
std::vector<int> report_gpus(uint64_t mask);

// Which method a group's energy split used: "sm", "memory", "equal", or
// "sm+memory" ... when several did, in that order; "-" when none.
std::string report_split_text(const accounting::Usage& u);

// A group's findings in one cell: "input-bound 62%, gpu-idle-allocated 10%"
// (share of the group's time); "" when none.
std::string report_findings_text(const accounting::GroupRow& row);

}  // namespace gd
