// Range checks on a parsed trace line, beyond JSON types: what a trace
// cannot mean (GPU index -5, a duplicate GPU, Xid code -3, t = 1e308) is
// rejected with "FILE:LINE: field: why" rather than passed to the rules.
#pragma once

#include <string>

#include "model/limits.h"
#include "model/sample.h"

namespace gd::trace_checks {

// GPU indices: NVML numbers GPUs from 0; no node has anywhere near 1024.
inline constexpr int kMaxGpuIndex = 1023;
// Xid codes: 1 to 65535 (model/sample.h).
inline constexpr int kMaxXidCode = gd::kMaxXidCode;
// t is Unix seconds: from the epoch to 2100-01-01T00:00:00Z. Tests and
// synthetic traces may start near 0, so the lower end is the epoch itself.
inline constexpr double kMaxUnixTime = 4102444800.0;

// Throw TraceError naming `where` ("FILE:LINE") and the field.
void check_header(const TraceHeader& h, const std::string& where);
void check_sample(const Sample& s, const std::string& where);
// Samples are in time order: `t` may not be earlier than the previous
// sample's.
void check_time_order(double t, double previous_t, const std::string& where);

}  // namespace gd::trace_checks
