// MIG: the GPU and compute instances of a MIG-enabled GPU, read through
// their MIG device handles (nvmlDeviceGetMigDeviceHandleByIndex), each with
// its GPU instance profile ("3g.40gb"), UUID and memory.
#include <algorithm>
#include <cstring>

#include "nvml/device_reader.h"
#include "nvml/nvml_util.h"

namespace gd::nvml {

std::string mig_profile_short_name(std::string_view nvml_name) {
  // NVML names a GPU instance profile "MIG 3g.40gb"; nvidia-smi, DCGM and
  // dcgm-exporter's GPU_I_PROFILE say "3g.40gb".
  constexpr std::string_view kPrefix = "MIG ";
  if (nvml_name.starts_with(kPrefix)) nvml_name.remove_prefix(kPrefix.size());
  return std::string(nvml_name);
}

// Profile id -> name, once: NVML's profiles are enumerated by their index
// (NVML_GPU_INSTANCE_PROFILE_*), and each answer carries the id that the
// GPU instances refer to.
void DeviceReader::read_mig_info(GpuInfo& info) {
  if (!mig_enabled_) return;
  for (unsigned index = 0; index < NVML_GPU_INSTANCE_PROFILE_COUNT; ++index) {
    nvmlGpuInstanceProfileInfo_v2_t p{};
    p.version = nvmlGpuInstanceProfileInfo_v2;
    nvmlReturn_t rc =
        call_if(f_.nvmlDeviceGetGpuInstanceProfileInfoV, dev_, index, &p);
    if (rc == NVML_SUCCESS) {
      profile_names_[p.id] =
          mig_profile_short_name(from_buffer(p.name, sizeof p.name));
      continue;
    }
    // Older drivers: no names; "<slices>g.<memory>gb" is how NVML names them.
    nvmlGpuInstanceProfileInfo_t v1{};
    if (call_if(f_.nvmlDeviceGetGpuInstanceProfileInfo, dev_, index, &v1) ==
        NVML_SUCCESS) {
      profile_names_[v1.id] = std::to_string(v1.sliceCount) + "g." +
                              std::to_string((v1.memorySizeMB + 1023) / 1024) +
                              "gb";
    }
  }
  info.mig_profiles = read_mig_instances(false);
}

const std::string& DeviceReader::gi_profile_name(unsigned gi_id) {
  auto it = gi_profiles_.find(gi_id);
  if (it != gi_profiles_.end()) return it->second;
  std::string name;
  nvmlGpuInstance_t gi = nullptr;
  nvmlGpuInstanceInfo_t gi_info{};
  if (ok(call_if(f_.nvmlDeviceGetGpuInstanceById, dev_, gi_id, &gi),
         "nvmlDeviceGetGpuInstanceById") &&
      ok(call_if(f_.nvmlGpuInstanceGetInfo, gi, &gi_info),
         "nvmlGpuInstanceGetInfo")) {
    auto p = profile_names_.find(gi_info.profileId);
    if (p != profile_names_.end()) name = p->second;
  }
  return gi_profiles_.emplace(gi_id, std::move(name)).first->second;
}

std::optional<std::vector<MigInstance>> DeviceReader::read_mig_instances(
    bool with_used) {
  unsigned count = 0;
  nvmlReturn_t rc = call_if(f_.nvmlDeviceGetMaxMigDeviceCount, dev_, &count);
  if (!read_ok(rc, "nvmlDeviceGetMaxMigDeviceCount", {"mig_instances"}))
    return std::nullopt;
  std::vector<MigInstance> out;
  for (unsigned i = 0; i < count && !lost_now_; ++i) {
    nvmlDevice_t mig = nullptr;
    rc = call_if(f_.nvmlDeviceGetMigDeviceHandleByIndex, dev_, i, &mig);
    if (rc == NVML_ERROR_NOT_FOUND) continue;  // no instance in this slot
    if (!read_ok(rc, "nvmlDeviceGetMigDeviceHandleByIndex",
                 {"mig_instances"})) {
      return std::nullopt;
    }
    unsigned gi = 0, ci = 0;
    if (!ok(call_if(f_.nvmlDeviceGetGpuInstanceId, mig, &gi),
            "nvmlDeviceGetGpuInstanceId") ||
        !ok(call_if(f_.nvmlDeviceGetComputeInstanceId, mig, &ci),
            "nvmlDeviceGetComputeInstanceId")) {
      continue;
    }
    MigInstance m;
    m.gi_id = gi;
    m.ci_id = ci;
    // The UUID and profile of an instance id never change while it exists;
    // a destroyed and re-created instance gets a new UUID, so the cache is
    // keyed by both ids and dropped when the layout changes (below).
    auto known = std::find_if(
        mig_uuids_.begin(), mig_uuids_.end(),
        [&](const MigIdentity& k) { return k.gi == gi && k.ci == ci; });
    if (known != mig_uuids_.end()) {
      m.uuid = known->uuid;
    } else {
      char buf[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
      if (ok(call_if(f_.nvmlDeviceGetUUID, mig, buf,
                     static_cast<unsigned>(sizeof buf)),
             "nvmlDeviceGetUUID")) {
        m.uuid = from_buffer(buf, sizeof buf);
      }
      mig_uuids_.push_back({gi, ci, m.uuid});
    }
    m.profile = gi_profile_name(gi);
    nvmlMemory_t mem{};
    if (ok(call_if(f_.nvmlDeviceGetMemoryInfo, mig, &mem),
           "nvmlDeviceGetMemoryInfo")) {
      m.mem_total_bytes = mem.total;
      if (with_used) m.mem_used_bytes = mem.used;
    }
    // Static reads take the first GPM sample of each instance, so the
    // first sample already has the activity since then.
    if (gpm_supported_ && gpm_mig_supported_ && !lost_now_) {
      read_gpm(gpm_instances_[gi], &gi, m.gpm, false);
      if (!with_used) m.gpm = {};
    }
    out.push_back(std::move(m));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.gi_id != b.gi_id ? a.gi_id < b.gi_id : a.ci_id < b.ci_id;
  });
  // Instances destroyed since the last read: forget what was learnt about
  // their ids (a new instance may reuse one with another profile).
  std::erase_if(mig_uuids_, [&](const MigIdentity& k) {
    return std::none_of(out.begin(), out.end(), [&](const MigInstance& m) {
      return m.gi_id == k.gi && m.ci_id == k.ci;
    });
  });
  std::erase_if(gi_profiles_, [&](const auto& kv) {
    return std::none_of(out.begin(), out.end(), [&](const MigInstance& m) {
      return m.gi_id == kv.first;
    });
  });
  for (auto it = gpm_instances_.begin(); it != gpm_instances_.end();) {
    const unsigned gi = it->first;
    if (std::none_of(out.begin(), out.end(),
                     [&](const MigInstance& m) { return m.gi_id == gi; })) {
      free_gpm(it->second);
      it = gpm_instances_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

}  // namespace gd::nvml
