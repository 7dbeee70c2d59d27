// Finding one GPU by index in the model (header-only: a lookup, no logic).
#pragma once

#include "model/sample.h"

namespace gd {

// The header's entry for GPU `index`, or nullptr.
inline const GpuInfo* find_gpu_info(const TraceHeader& header, int index) {
  for (const auto& g : header.gpus)
    if (g.index == index) return &g;
  return nullptr;
}

}  // namespace gd
