// The verdict of burn's all-reduce test (node-wide): fail on an error, a
// hang or a wrong element; warn when the bus bandwidth is below
// kBusFloorShare of the published figure for this node's GPUs and link;
// pass at or above it; "not judged" where no figure applies (one GPU, a
// model or GPU count the table does not list, an unknown link), the
// figures then stated without a claim.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "burn/collective_reference.h"
#include "burn/results.h"

namespace gd::burn {

struct CollectiveVerdict {
  std::string verdict;  // pass | warn | fail | not judged | not run | ""
  std::vector<std::string> reasons;
  std::optional<BusReference> reference;
};

// `model`: the ranks' common NVML name ("" when they differ).
CollectiveVerdict judge_collective(const CollectiveResult& result,
                                   const std::string& model);

// "fail" 2, "warn" 1, otherwise 0.
int collective_severity(const CollectiveVerdict& v);

}  // namespace gd::burn
