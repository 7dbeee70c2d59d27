// Finding one GPU in the model: by index, or by any name a user or a
// scheduler gives it (an NVML index, a UUID, a device file).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/sample.h"

namespace gd {

// The header's entry for GPU `index`, or nullptr.
inline const GpuInfo* find_gpu_info(const TraceHeader& header, int index) {
  for (const auto& g : header.gpus)
    if (g.index == index) return &g;
  return nullptr;
}

// The GPUs a `--gpu 0,2` list selects, by index; empty selects every GPU.
using GpuSelection = std::vector<int>;

inline bool selects(const GpuSelection& gpus, int index) {
  if (gpus.empty()) return true;
  for (int g : gpus)
    if (g == index) return true;
  return false;
}

// "" when `name` has the shape of a GPU name: an NVML index ("3"), a GPU
// UUID ("GPU-8f1c...", any case), a PCI address ("0000:1a:00.0",
// "00000000:1A:00.0" as nvidia-smi writes it, or "1a:00.0"), or a device
// file ("/dev/nvidia3": the GPU whose minor number is 3, as a job's device
// cgroup lists it); else why not, for a usage error.
std::string check_gpu_name(std::string_view name);

// The index `name` is when it is one ("3"); nullopt for any other name.
std::optional<int> gpu_index_of(std::string_view name);

// The index of the GPU `name` names in `header`; nullopt when none.
std::optional<int> gpu_by_name(const TraceHeader& header,
                               std::string_view name);

}  // namespace gd
