// MIG: a MIG-enabled GPU's instances (the sample's mig_instances) as MIG
// device handles, GPU instances and compute instances, with the GPU
// instance profiles an A100/H100 has. A GPU whose MIG mode is off answers
// like a real one: no MIG devices, and the instance calls say so.
#include <cstdio>
#include <string>
#include <string_view>

#include "mig_profiles.h"
#include "state.h"

// The opaque types behind nvmlGpuInstance_t / nvmlComputeInstance_t: one
// static slot per GPU and GPU instance id (and compute instance id).
struct nvmlGpuInstance_st {
  unsigned slot;
  unsigned gi;
};
struct nvmlComputeInstance_st {
  unsigned slot;
  unsigned gi;
  unsigned ci;
};

using fake_nvml::DeviceCall;
using fake_nvml::MigProfile;

namespace {

constexpr unsigned kMaxInstanceId = 32;  // GPU and compute instance ids
nvmlGpuInstance_st g_gpu_instances[fake_nvml::kMaxDevices][kMaxInstanceId];
nvmlComputeInstance_st g_compute_instances[fake_nvml::kMaxDevices]
                                          [kMaxInstanceId][8];

template <typename Table, typename Handle>
bool in_table(const Handle* h, const Table& table) {
  auto addr = reinterpret_cast<std::uintptr_t>(h);
  auto base = reinterpret_cast<std::uintptr_t>(&table);
  return h != nullptr && addr >= base && addr < base + sizeof(table) &&
         (addr - base) % sizeof(Handle) == 0;
}

nvmlGpuInstance_t gi_handle(unsigned slot, unsigned gi) {
  auto& h = g_gpu_instances[slot][gi];
  h.slot = slot;
  h.gi = gi;
  return &h;
}

nvmlComputeInstance_t ci_handle(unsigned slot, unsigned gi, unsigned ci) {
  auto& h = g_compute_instances[slot][gi][ci];
  h.slot = slot;
  h.gi = gi;
  h.ci = ci;
  return &h;
}

bool mig_on(const DeviceCall& call) {
  return call.info().mig_enabled.value_or(false);
}

// The instance of GPU instance `gi` now, or nullptr.
const gd::MigInstance* find_gi(const DeviceCall& call, unsigned gi) {
  for (const auto& m : call.mig_instances())
    if (m.gi_id == gi) return &m;
  return nullptr;
}

// A physical GPU's call on one of its GPU instances.
struct GpuInstanceCall {
  GpuInstanceCall(const char* function, nvmlGpuInstance_t gi)
      : call(function, fake_nvml::handle_for_slot(
                           in_table(gi, g_gpu_instances) ? gi->slot : 0)) {
    if (call.status() != NVML_SUCCESS) {
      status = call.status();
    } else if (!in_table(gi, g_gpu_instances) || !mig_on(call) ||
               !(instance = find_gi(call, gi->gi))) {
      status = NVML_ERROR_INVALID_ARGUMENT;  // destroyed, or never existed
    }
  }
  DeviceCall call;
  nvmlReturn_t status = NVML_SUCCESS;
  const gd::MigInstance* instance = nullptr;
};

void fill_profile(const MigProfile& p, const gd::GpuInfo& gpu,
                  nvmlGpuInstanceProfileInfo_t& out) {
  out = nvmlGpuInstanceProfileInfo_t{};
  out.id = p.id;
  out.isP2pSupported = 0;
  out.sliceCount = p.slices;
  out.instanceCount = p.instance_count;
  out.multiprocessorCount = p.slices * fake_nvml::sms_per_slice(gpu);
  out.copyEngineCount = p.slices;
  out.decoderCount = p.slices / 2;
  out.encoderCount = 0;
  out.jpegCount = p.slices == 7 ? 1 : 0;
  out.ofaCount = p.slices == 7 ? 1 : 0;
  out.memorySizeMB = p.memory_mb;
}

nvmlReturn_t profile_info(const char* function, nvmlDevice_t device,
                          unsigned index, nvmlGpuInstanceProfileInfo_t* info,
                          char* name, unsigned name_size) {
  DeviceCall call(function, device);
  if (call.status() != NVML_SUCCESS) return call.status();
  if (info == nullptr || index >= NVML_GPU_INSTANCE_PROFILE_COUNT)
    return NVML_ERROR_INVALID_ARGUMENT;
  if (!call.info().mig_enabled) return NVML_ERROR_NOT_SUPPORTED;  // no MIG
  auto p =
      fake_nvml::profile_for_index(call.info(), call.mig_instances(), index);
  if (!p) return NVML_ERROR_NOT_SUPPORTED;  // this GPU has no such profile
  fill_profile(*p, call.info(), *info);
  if (name) std::snprintf(name, name_size, "MIG %s", p->name.c_str());
  return NVML_SUCCESS;
}

}  // namespace

FAKE_NVML_EXPORT nvmlReturn_t
nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int* count) {
  DeviceCall call("nvmlDeviceGetMaxMigDeviceCount", device);
  if (call.status() != NVML_SUCCESS) return call.status();
  if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  // Zero when MIG is off or the GPU has none (NVML's rule).
  *count = mig_on(call) ? fake_nvml::kMaxMigDevices : 0;
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(
    nvmlDevice_t device, unsigned int index, nvmlDevice_t* migDevice) {
  DeviceCall call("nvmlDeviceGetMigDeviceHandleByIndex", device);
  if (call.status() != NVML_SUCCESS) return call.status();
  if (migDevice == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (!mig_on(call)) return NVML_ERROR_NOT_SUPPORTED;
  if (index >= fake_nvml::kMaxMigDevices) return NVML_ERROR_INVALID_ARGUMENT;
  if (index >= call.mig_instances().size()) return NVML_ERROR_NOT_FOUND;
  *migDevice = fake_nvml::mig_handle_for(call.slot(), index);
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t
nvmlDeviceIsMigDeviceHandle(nvmlDevice_t device, unsigned int* isMigDevice) {
  DeviceCall call("nvmlDeviceIsMigDeviceHandle", device,
                  DeviceCall::Mig::kAccept);
  if (call.status() != NVML_SUCCESS) return call.status();
  if (isMigDevice == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *isMigDevice = call.is_mig() ? 1 : 0;
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t device,
                                                         unsigned int* id) {
  DeviceCall call("nvmlDeviceGetGpuInstanceId", device,
                  DeviceCall::Mig::kAccept);
  if (call.status() != NVML_SUCCESS) return call.status();
  if (id == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (!call.is_mig()) return NVML_ERROR_NOT_SUPPORTED;  // a physical GPU
  *id = call.mig().gi_id;
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t
nvmlDeviceGetComputeInstanceId(nvmlDevice_t device, unsigned int* id) {
  DeviceCall call("nvmlDeviceGetComputeInstanceId", device,
                  DeviceCall::Mig::kAccept);
  if (call.status() != NVML_SUCCESS) return call.status();
  if (id == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (!call.is_mig()) return NVML_ERROR_NOT_SUPPORTED;
  *id = call.mig().ci_id;
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetDeviceHandleFromMigDeviceHandle(
    nvmlDevice_t migDevice, nvmlDevice_t* device) {
  DeviceCall call("nvmlDeviceGetDeviceHandleFromMigDeviceHandle", migDevice,
                  DeviceCall::Mig::kAccept);
  if (call.status() != NVML_SUCCESS) return call.status();
  if (device == nullptr || !call.is_mig()) return NVML_ERROR_INVALID_ARGUMENT;
  *device = fake_nvml::handle_for_slot(call.slot());
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t
nvmlDeviceGetGpuInstanceProfileInfo(nvmlDevice_t device, unsigned int profile,
                                    nvmlGpuInstanceProfileInfo_t* info) {
  return profile_info("nvmlDeviceGetGpuInstanceProfileInfo", device, profile,
                      info, nullptr, 0);
}

FAKE_NVML_EXPORT nvmlReturn_t
nvmlDeviceGetGpuInstanceProfileInfoV(nvmlDevice_t device, unsigned int profile,
                                     nvmlGpuInstanceProfileInfo_v2_t* info) {
  if (info != nullptr && info->version != nvmlGpuInstanceProfileInfo_v2) {
    DeviceCall call("nvmlDeviceGetGpuInstanceProfileInfoV", device);
    return call.status() != NVML_SUCCESS ? call.status()
                                         : NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  }
  nvmlGpuInstanceProfileInfo_t v1{};
  char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = {};
  nvmlReturn_t rc =
      profile_info("nvmlDeviceGetGpuInstanceProfileInfoV", device, profile,
                   info ? &v1 : nullptr, name, sizeof name);
  if (rc != NVML_SUCCESS) return rc;
  info->id = v1.id;
  info->isP2pSupported = v1.isP2pSupported;
  info->sliceCount = v1.sliceCount;
  info->instanceCount = v1.instanceCount;
  info->multiprocessorCount = v1.multiprocessorCount;
  info->copyEngineCount = v1.copyEngineCount;
  info->decoderCount = v1.decoderCount;
  info->encoderCount = v1.encoderCount;
  info->jpegCount = v1.jpegCount;
  info->ofaCount = v1.ofaCount;
  info->memorySizeMB = v1.memorySizeMB;
  std::snprintf(info->name, sizeof info->name, "%s", name);
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceById(
    nvmlDevice_t device, unsigned int id, nvmlGpuInstance_t* gpuInstance) {
  DeviceCall call("nvmlDeviceGetGpuInstanceById", device);
  if (call.status() != NVML_SUCCESS) return call.status();
  if (gpuInstance == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (!mig_on(call)) return NVML_ERROR_NOT_SUPPORTED;
  if (id >= kMaxInstanceId || !find_gi(call, id)) return NVML_ERROR_NOT_FOUND;
  *gpuInstance = gi_handle(call.slot(), id);
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetGpuInstances(
    nvmlDevice_t device, unsigned int profileId,
    nvmlGpuInstance_t* gpuInstances, unsigned int* count) {
  DeviceCall call("nvmlDeviceGetGpuInstances", device);
  if (call.status() != NVML_SUCCESS) return call.status();
  if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (!mig_on(call)) return NVML_ERROR_NOT_SUPPORTED;
  unsigned n = 0;
  for (const auto& m : call.mig_instances()) {
    auto p = fake_nvml::profile_of(call.info(), call.mig_instances(), m);
    if (!p || p->id != profileId || m.gi_id >= kMaxInstanceId) continue;
    bool seen = false;  // one GPU instance may hold several compute ones
    for (unsigned i = 0; i < n; ++i) seen |= gpuInstances[i]->gi == m.gi_id;
    if (seen) continue;
    if (gpuInstances == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    gpuInstances[n++] = gi_handle(call.slot(), m.gi_id);
  }
  *count = n;
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlGpuInstanceGetInfo(
    nvmlGpuInstance_t gpuInstance, nvmlGpuInstanceInfo_t* info) {
  GpuInstanceCall gic("nvmlGpuInstanceGetInfo", gpuInstance);
  if (gic.status != NVML_SUCCESS) return gic.status;
  if (info == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  auto p = fake_nvml::profile_of(gic.call.info(), gic.call.mig_instances(),
                                 *gic.instance);
  info->device = fake_nvml::handle_for_slot(gpuInstance->slot);
  info->id = gpuInstance->gi;
  info->profileId = p ? p->id : 0;
  info->placement.start = fake_nvml::placement_start(
      gic.call.info(), gic.call.mig_instances(), *gic.instance);
  info->placement.size = p ? p->slices : 0;
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlGpuInstanceGetComputeInstances(
    nvmlGpuInstance_t gpuInstance, unsigned int profileId,
    nvmlComputeInstance_t* computeInstances, unsigned int* count) {
  GpuInstanceCall gic("nvmlGpuInstanceGetComputeInstances", gpuInstance);
  if (gic.status != NVML_SUCCESS) return gic.status;
  if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  auto p = fake_nvml::profile_of(gic.call.info(), gic.call.mig_instances(),
                                 *gic.instance);
  unsigned n = 0;
  // The scenario's compute instances fill their GPU instance: their profile
  // is the compute profile with the GPU instance's slice count.
  for (const auto& m : gic.call.mig_instances()) {
    if (m.gi_id != gpuInstance->gi || m.ci_id >= 8) continue;
    if (!p || fake_nvml::compute_profile_index(p->slices) != profileId)
      continue;
    if (computeInstances == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    computeInstances[n++] =
        ci_handle(gpuInstance->slot, gpuInstance->gi, m.ci_id);
  }
  *count = n;
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlComputeInstanceGetInfo_v2(
    nvmlComputeInstance_t computeInstance, nvmlComputeInstanceInfo_t* info) {
  if (!in_table(computeInstance, g_compute_instances)) {
    return fake_nvml::current_world() ? NVML_ERROR_INVALID_ARGUMENT
                                      : NVML_ERROR_UNINITIALIZED;
  }
  GpuInstanceCall gic("nvmlComputeInstanceGetInfo_v2",
                      gi_handle(computeInstance->slot, computeInstance->gi));
  if (gic.status != NVML_SUCCESS) return gic.status;
  if (info == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  auto p = fake_nvml::profile_of(gic.call.info(), gic.call.mig_instances(),
                                 *gic.instance);
  info->device = fake_nvml::handle_for_slot(computeInstance->slot);
  info->gpuInstance = gi_handle(computeInstance->slot, computeInstance->gi);
  info->id = computeInstance->ci;
  info->profileId = p ? fake_nvml::compute_profile_index(p->slices) : 0;
  info->placement.start = 0;
  info->placement.size = p ? p->slices : 0;
  return NVML_SUCCESS;
}
