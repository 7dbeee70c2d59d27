// The recent values of each GPU for the screen's charts: a fixed ring of
// points per GPU (a few minutes at 1 Hz), floats, NaN where unknown.
#pragma once

#include <array>
#include <cstddef>
#include <vector>

#include "model/sample.h"

namespace gd::monitor {

enum class Metric {
  kUtil,
  kMemUsed,   // percent of total
  kTemp,      // C
  kPower,     // W
  kSmClock,   // MHz
  kMemClock,  // MHz
  kPcieTx,    // bytes/s
  kPcieRx,    // bytes/s
};
inline constexpr size_t kMetricCount = 8;

struct GpuSeries {
  int index = 0;
  // points[m] holds values of Metric m, oldest first, at most capacity.
  std::array<std::vector<float>, kMetricCount> points;
};

class GpuHistory {
 public:
  // Ten minutes at 1 Hz: wider than any terminal's chart.
  static constexpr size_t kCapacity = 600;

  explicit GpuHistory(const TraceHeader& header);
  // Appends one point per GPU of the header (NaN for a GPU absent, stale or
  // lost in `s`).
  void add(const TraceHeader& header, const Sample& s);
  void clear();
  const std::vector<GpuSeries>& series() const { return series_; }
  size_t size() const;

 private:
  std::vector<GpuSeries> series_;
};

}  // namespace gd::monitor
