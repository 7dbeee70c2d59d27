// The GPUs of a snapshot that have values to show, with their header facts.
#pragma once

#include <string>
#include <vector>

#include "exporter/metrics_input.h"

namespace gd {

struct GpuRow {
  const GpuInfo* info = nullptr;  // nullptr if the header does not list it
  const GpuSample* sample = nullptr;
};

// Header GPUs in index order whose latest sample answered (not stale, not
// lost); empty before the first sample.
inline std::vector<GpuRow> answered_gpus(const MetricsInput& in) {
  std::vector<GpuRow> rows;
  if (in.sample == nullptr) return rows;
  for (const auto& g : in.sample->gpus) {
    if (g.stale || g.lost) continue;
    GpuRow row{nullptr, &g};
    for (const auto& info : in.header->gpus)
      if (info.index == g.index) row.info = &info;
    rows.push_back(row);
  }
  return rows;
}

}  // namespace gd
