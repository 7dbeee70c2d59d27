#include "mig_profiles.h"

#include <cmath>
#include <set>

namespace fake_nvml {
namespace {

struct Known {
  unsigned index, id, slices, instance_count, memory_slices;
};

// NVML's GPU instance profiles of an A100/H100 (nvidia-smi mig -lgip).
constexpr Known kProfiles[] = {
    {0, 19, 1, 7, 1},  // 1g.10gb
    {1, 14, 2, 3, 2},  // 2g.20gb
    {2, 9, 3, 2, 4},   // 3g.40gb
    {3, 5, 4, 1, 4},   // 4g.40gb
    {4, 0, 7, 1, 8},   // 7g.80gb
    {7, 15, 1, 4, 2},  // 1g.20gb (1 slice, twice the memory)
};

MigProfile make(const gd::GpuInfo& gpu,
                const std::vector<gd::MigInstance>& instances, const Known& k) {
  MigProfile p;
  p.index = k.index;
  p.id = k.id;
  p.slices = k.slices;
  p.instance_count = k.instance_count;
  const double total_gib =
      static_cast<double>(gpu.memory_total_bytes.value_or(0)) /
      (1024.0 * 1024 * 1024);
  const long gb = std::lround(total_gib * k.memory_slices / 8);
  p.name = std::to_string(k.slices) + "g." + std::to_string(gb) + "gb";
  p.memory_mb = static_cast<unsigned long long>(gb) * 1024;
  // The scenario's own instances of this profile give its real size.
  for (const auto& m : instances) {
    if (m.profile == p.name && m.mem_total_bytes) {
      p.memory_mb = *m.mem_total_bytes / (1024 * 1024);
      break;
    }
  }
  return p;
}

}  // namespace

std::optional<MigProfile> profile_for_index(
    const gd::GpuInfo& gpu, const std::vector<gd::MigInstance>& instances,
    unsigned index) {
  for (const Known& k : kProfiles)
    if (k.index == index) return make(gpu, instances, k);
  return std::nullopt;
}

std::optional<MigProfile> profile_of(
    const gd::GpuInfo& gpu, const std::vector<gd::MigInstance>& instances,
    const gd::MigInstance& instance) {
  for (const Known& k : kProfiles) {
    MigProfile p = make(gpu, instances, k);
    if (p.name == instance.profile) return p;
  }
  // A name this GPU's memory does not give (a scenario for another size):
  // the profile with its slice count.
  unsigned slices = 0;
  for (char c : instance.profile) {
    if (c < '0' || c > '9') break;
    slices = slices * 10 + static_cast<unsigned>(c - '0');
    if (slices > 8) return std::nullopt;
  }
  for (const Known& k : kProfiles) {
    if (k.slices == slices) {
      MigProfile p = make(gpu, instances, k);
      p.name = instance.profile;
      return p;
    }
  }
  return std::nullopt;
}

unsigned placement_start(const gd::GpuInfo& gpu,
                         const std::vector<gd::MigInstance>& instances,
                         const gd::MigInstance& instance) {
  unsigned start = 0;
  std::set<unsigned> counted;
  for (const auto& m : instances) {
    if (m.gi_id >= instance.gi_id || !counted.insert(m.gi_id).second) continue;
    if (auto p = profile_of(gpu, instances, m)) start += p->slices;
  }
  return start;
}

unsigned compute_profile_index(unsigned slices) {
  switch (slices) {
    case 1:
      return 0;
    case 2:
      return 1;
    case 3:
      return 2;
    case 4:
      return 3;
    case 7:
      return 4;
    case 8:
      return 5;
    case 6:
      return 6;
    default:
      return 0;
  }
}

unsigned sms_per_slice(const gd::GpuInfo& gpu) {
  // A100: 98 SMs in 7 slices; H100 SXM: 132 in 7 (16 a slice, some spare).
  return gpu.architecture == "hopper" || gpu.architecture == "blackwell" ? 16
                                                                         : 14;
}

}  // namespace fake_nvml
