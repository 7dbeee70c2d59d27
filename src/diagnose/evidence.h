// Small shared helpers for rules: bounded running statistics and the wording
// of evidence (numbers, durations, time ranges), so every finding reads alike.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

// Evidence words sizes with gib_text, lengths of time with elapsed_words and
// lists with join_ints (common/), so rules include this header for them.
#include "common/bytes_text.h"
#include "common/elapsed_text.h"
#include "common/int_list.h"
#include "model/gpu_lookup.h"
#include "model/sample.h"

namespace gd {

// Count, first and last time of the samples where something held.
// The earliest and latest of the times added (kernel stamps may come in
// any order against sample times), and how many.
struct Span {
  size_t count = 0;
  double first = 0, last = 0;
  void add(double t) {
    if (count++ == 0) {
      first = last = t;
      return;
    }
    if (t < first) first = t;
    if (t > last) last = t;
  }
  bool empty() const { return count == 0; }
};

// When the kernel logged an event: the line's own stamp (Event::logged_at)
// where it had one, else the time of the sample that brought it. `check`
// reads the kernel log since boot: yesterday's Xid is yesterday's, on every
// surface (the drain reason, the evidence, the finding's start).
inline double event_time(const Event& e, double sample_t) {
  return e.logged_at.value_or(sample_t);
}

// Running mean / min / max of one metric (no sample storage).
struct Stat {
  size_t n = 0;
  double sum = 0;
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();
  void add(double v) {
    ++n;
    sum += v;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  bool empty() const { return n == 0; }
  double mean() const { return n ? sum / static_cast<double>(n) : 0; }
};

// "2024-11-22 08:00:00 UTC".
std::string format_time(double unix_s);
// "08:00:00-08:10:00 UTC (10 min)" (the date is added when the range is not
// within one UTC day); a single instant when start == end.
std::string format_range(double start, double end);
// 0.923 -> "92%".
std::string format_fraction(double fraction);
// "GPU 3" or "GPU 3 (NVIDIA A100-SXM4-80GB, 00000000:07:00.0)".
std::string gpu_label(const TraceHeader& header, int index);

// True when the reasons are known and `reason` is among them.
bool has_reason(const GpuSample& gpu, std::string_view reason);

// The GPU is doing work: utilisation known and >= busy_util_pct; or, with
// utilisation unknown, the clock-event reasons are known and do not say
// gpu_idle. Lost/stale readings are never busy.
bool gpu_busy(const GpuSample& gpu, double busy_util_pct);

// Severity order: critical 2, warning 1, info 0, anything else -1.
int severity_rank(std::string_view severity);

}  // namespace gd
