// The GPU instance profiles of a MIG-capable GPU (A100/H100 layout: 7
// compute slices, 8 memory slices), named as NVML names them
// ("3g.40gb" for 3 compute slices and half of an 80 GB GPU's memory).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/sample.h"

namespace fake_nvml {

struct MigProfile {
  unsigned index = 0;           // NVML_GPU_INSTANCE_PROFILE_*
  unsigned id = 0;              // the id instances refer to
  unsigned slices = 0;          // compute slices
  unsigned instance_count = 0;  // how many fit on the GPU
  std::string name;             // "3g.40gb"
  unsigned long long memory_mb = 0;
};

// The profile with NVML profile index `index`, named after the scenario's
// instances where one has it; nullopt for an index this GPU lacks.
std::optional<MigProfile> profile_for_index(
    const gd::GpuInfo& gpu, const std::vector<gd::MigInstance>& instances,
    unsigned index);
// The profile of one instance (by its profile name), or nullopt.
std::optional<MigProfile> profile_of(
    const gd::GpuInfo& gpu, const std::vector<gd::MigInstance>& instances,
    const gd::MigInstance& instance);
// Where the instance starts (in slices): after the GPU instances with
// lower ids.
unsigned placement_start(const gd::GpuInfo& gpu,
                         const std::vector<gd::MigInstance>& instances,
                         const gd::MigInstance& instance);
// NVML_COMPUTE_INSTANCE_PROFILE_* of a compute instance of `slices`.
unsigned compute_profile_index(unsigned slices);
unsigned sms_per_slice(const gd::GpuInfo& gpu);

}  // namespace fake_nvml
