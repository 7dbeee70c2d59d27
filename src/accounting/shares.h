// How one interval of a shared GPU is split between the groups holding it.
// Holding is having memory on the GPU, so held time is split by memory;
// what the GPU did (busy, SM-active, energy) by each holder's SM% when the
// driver reports it for every holder, else like held time.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "accounting/account.h"

namespace gd::accounting {

// One holder of a GPU in one interval (its processes on that GPU summed).
struct Holder {
  uint32_t owner = 0;           // index into the sample's owners
  std::optional<uint64_t> mem;  // bytes; nullopt when a process's is unknown
  std::optional<double> sm;     // SM %; nullopt when a process's is unknown
};

struct Split {
  SplitMethod held_method = SplitMethod::kEqual;
  SplitMethod activity_method = SplitMethod::kEqual;
  std::vector<double> held, activity;  // per holder, each summing to 1
};

// Fills `out` for `holders` (not empty), reusing its storage.
void split_interval(const std::vector<Holder>& holders, Split& out);

}  // namespace gd::accounting
