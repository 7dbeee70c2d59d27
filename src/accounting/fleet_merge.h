// A fleet's accounts: each node's report (the same engine over its window)
// merged into one. Users and containers are fleet-wide (one row for alice
// on every node); a job is its node's unless Slurm names it (a Slurm job
// id is the cluster's); a GPU is its node's. Every GPU keeps its own
// closing figures, so the fleet closes as each node does.
#pragma once

#include <string>
#include <vector>

#include "accounting/account.h"

namespace gd::accounting {

// Nodes a fleet's group row names (GroupRow::nodes); node_count counts all.
inline constexpr size_t kNodesPerGroup = 8;

struct NodeAccount {
  std::string node;
  AccountReport report;
};

AccountReport merge_node_reports(std::vector<NodeAccount> nodes);

}  // namespace gd::accounting
