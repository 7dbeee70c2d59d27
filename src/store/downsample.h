// Downsampling tiers of the history store and the averaging that moves data
// from one tier to the next.
#pragma once

#include <vector>

#include "model/sample.h"

namespace gd::store {

// Tier 0 keeps samples as collected (1 s at the default interval) for this
// long: a day covers "what happened last night" at full resolution, which
// is what diagnose needs for short events (util cycling, throttling bursts).
inline constexpr double kRawKeepS = 86400;
// Tier 1 keeps one averaged sample per minute until retention deletes it:
// a month of trends (memory growth, temperature) at 1/60 of the size.
inline constexpr double kTier1StepS = 60;
// Raw samples are sealed into one block per 10-minute window: large enough
// for zstd and the delta coding to pay off (~600 samples), small enough that
// a query for the last minutes decodes little, and a whole number of tier-1
// steps so no minute straddles two raw blocks.
inline constexpr double kRawBlockSpanS = 600;
// Tier-1 blocks cover an hour (60 averaged samples each).
inline constexpr double kTier1BlockSpanS = 3600;
// Averages are rounded to this many decimals: far below any sensor's
// resolution, and it lets the codec store them as scaled integers instead
// of 8 raw bytes of binary fraction.
inline constexpr int kAverageDecimals = 3;

// One sample per kTier1StepS bucket (floor(t / step)) of `samples` (time
// order): numeric fields are the average of the known values (unknown if
// none); t, GPU flags and process lists are the bucket's last sample's
// (trace semantics: a sample describes the interval that ends at t), with
// each process's cpu_pct averaged; a counter (a field named "..._total")
// keeps its last value; clock event reasons and read errors are the union
// and events are all kept, so nothing that happened disappears; a boolean
// flag is true if it was true at any time in the bucket; device holders are
// the last list the bucket saw, and so are the RDMA ports (their counters
// are totals); other_cpu_top is each process's average over the bucket's
// samples that looked, the busiest kOtherCpuTopMax.
std::vector<Sample> downsample(const std::vector<Sample>& samples, double step);

}  // namespace gd::store
