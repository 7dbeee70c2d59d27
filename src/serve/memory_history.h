// serve --no-db: the last minutes of samples kept in memory, so the
// dashboard's charts, /api/v1/history, /api/v1/alerts, /api/v1/usage and
// the trace download answer for them instead of staying empty. Bounded by
// age and by bytes (the older samples go first); nothing touches the disk,
// and all of it is gone when serve stops. History replies carry
// "kept_in_memory_s" so a reader knows why they start where they do.
#pragma once

#include <cstddef>
#include <memory>

#include "serve/history.h"

namespace gd {

// What --no-db keeps by default: 15 minutes, in at most 64 MiB.
inline constexpr double kMemoryHistoryKeepS = 15 * 60;
inline constexpr size_t kMemoryHistoryMaxBytes = size_t{64} << 20;
// Alerts (fired, resolved) kept for /api/v1/alerts.
inline constexpr size_t kMemoryHistoryMaxAlerts = 1000;

std::unique_ptr<History> memory_history(
    double keep_s = kMemoryHistoryKeepS,
    size_t max_bytes = kMemoryHistoryMaxBytes);

// About the memory `s` takes, for the byte bound: its vectors' elements
// and the text of its strings.
size_t approx_sample_bytes(const Sample& s);

}  // namespace gd
