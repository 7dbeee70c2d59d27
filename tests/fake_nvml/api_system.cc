// NVML entry points that are not about one GPU's readings: init, shutdown,
// error strings, versions, device enumeration and handle lookup.
#include <cstdio>
#include <string>

#include "error_codes.h"
#include "pci_address.h"
#include "state.h"

using fake_nvml::DeviceCall;
using fake_nvml::SystemCall;

namespace {

// CUDA version as NVML encodes it: "12.2" -> 12020 (1000 * major + 10 * minor).
bool cuda_version_number(const std::string& text, int& out) {
  int major = 0, minor = 0;
  if (std::sscanf(text.c_str(), "%d.%d", &major, &minor) != 2) return false;
  out = major * 1000 + minor * 10;
  return true;
}

nvmlReturn_t cuda_driver_version(const char* function, int* version) {
  SystemCall call(function);
  if (call.status() != NVML_SUCCESS) return call.status();
  if (version == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const auto& driver = call.world().scenario.header().driver;
  if (!driver || !cuda_version_number(driver->cuda_driver_version, *version)) {
    return NVML_ERROR_NOT_SUPPORTED;
  }
  return NVML_SUCCESS;
}

nvmlReturn_t device_count(const char* function, unsigned int* count) {
  SystemCall call(function);
  if (call.status() != NVML_SUCCESS) return call.status();
  if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *count = call.world().enumerated_count();
  return NVML_SUCCESS;
}

nvmlReturn_t handle_by_index(const char* function, unsigned int index,
                             nvmlDevice_t* device) {
  {
    auto world =
        fake_nvml::current_world();  // init check before argument checks
    if (!world) return NVML_ERROR_UNINITIALIZED;
    if (device == nullptr || index >= world->enumerated_count())
      return NVML_ERROR_INVALID_ARGUMENT;
  }
  DeviceCall call(function, index);
  if (call.status() != NVML_SUCCESS) return call.status();
  *device = fake_nvml::handle_for_slot(index);
  return NVML_SUCCESS;
}

// Finds the GPU whose header entry satisfies `match`; NOT_FOUND otherwise.
template <typename Match>
nvmlReturn_t handle_where(const char* function, const char* key,
                          nvmlDevice_t* device, Match match) {
  auto world = fake_nvml::current_world();
  if (!world) return NVML_ERROR_UNINITIALIZED;
  if (key == nullptr || device == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const auto& gpus = world->scenario.header().gpus;
  for (unsigned slot = 0; slot < gpus.size(); ++slot) {
    if (!match(gpus[slot])) continue;
    DeviceCall call(function, slot);
    if (call.status() != NVML_SUCCESS) return call.status();
    *device = fake_nvml::handle_for_slot(slot);
    return NVML_SUCCESS;
  }
  return NVML_ERROR_NOT_FOUND;
}

nvmlReturn_t handle_by_pci(const char* function, const char* bus_id,
                           nvmlDevice_t* device) {
  auto wanted = bus_id ? fake_nvml::parse_pci_address(bus_id) : std::nullopt;
  if (bus_id != nullptr && !wanted) {
    return fake_nvml::current_world() ? NVML_ERROR_INVALID_ARGUMENT
                                      : NVML_ERROR_UNINITIALIZED;
  }
  return handle_where(function, bus_id, device, [&](const gd::GpuInfo& g) {
    return fake_nvml::parse_pci_address(g.pci_bus_id) == wanted;
  });
}

}  // namespace

FAKE_NVML_EXPORT nvmlReturn_t nvmlInit_v2(void) {
  return fake_nvml::init("nvmlInit_v2");
}
FAKE_NVML_EXPORT nvmlReturn_t nvmlInit(void) {
  return fake_nvml::init("nvmlInit");
}
FAKE_NVML_EXPORT nvmlReturn_t nvmlInitWithFlags(unsigned int /*flags*/) {
  return fake_nvml::init("nvmlInitWithFlags");
}
FAKE_NVML_EXPORT nvmlReturn_t nvmlShutdown(void) {
  return fake_nvml::shutdown();
}

FAKE_NVML_EXPORT const char* nvmlErrorString(nvmlReturn_t result) {
  return fake_nvml::error_string(static_cast<int>(result));
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char* version,
                                                         unsigned int length) {
  SystemCall call("nvmlSystemGetDriverVersion");
  if (call.status() != NVML_SUCCESS) return call.status();
  const auto& driver = call.world().scenario.header().driver;
  if (!driver || driver->driver_version.empty())
    return NVML_ERROR_NOT_SUPPORTED;
  return fake_nvml::copy_string(driver->driver_version, version, length);
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlSystemGetNVMLVersion(char* version,
                                                       unsigned int length) {
  SystemCall call("nvmlSystemGetNVMLVersion");
  if (call.status() != NVML_SUCCESS) return call.status();
  const auto& driver = call.world().scenario.header().driver;
  if (!driver || driver->nvml_version.empty()) return NVML_ERROR_NOT_SUPPORTED;
  return fake_nvml::copy_string(driver->nvml_version, version, length);
}

FAKE_NVML_EXPORT nvmlReturn_t
nvmlSystemGetCudaDriverVersion(int* cudaDriverVersion) {
  return cuda_driver_version("nvmlSystemGetCudaDriverVersion",
                             cudaDriverVersion);
}

#ifndef FAKE_NVML_OLD_API
FAKE_NVML_EXPORT nvmlReturn_t
nvmlSystemGetCudaDriverVersion_v2(int* cudaDriverVersion) {
  return cuda_driver_version("nvmlSystemGetCudaDriverVersion_v2",
                             cudaDriverVersion);
}
#endif

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* deviceCount) {
  return device_count("nvmlDeviceGetCount_v2", deviceCount);
}
FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned int* deviceCount) {
  return device_count("nvmlDeviceGetCount", deviceCount);
}

FAKE_NVML_EXPORT nvmlReturn_t
nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  return handle_by_index("nvmlDeviceGetHandleByIndex_v2", index, device);
}
FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index,
                                                         nvmlDevice_t* device) {
  return handle_by_index("nvmlDeviceGetHandleByIndex", index, device);
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByUUID(const char* uuid,
                                                        nvmlDevice_t* device) {
  return handle_where(
      "nvmlDeviceGetHandleByUUID", uuid, device,
      [&](const gd::GpuInfo& g) { return !g.uuid.empty() && g.uuid == uuid; });
}

FAKE_NVML_EXPORT nvmlReturn_t
nvmlDeviceGetHandleBySerial(const char* serial, nvmlDevice_t* device) {
  return handle_where("nvmlDeviceGetHandleBySerial", serial, device,
                      [&](const gd::GpuInfo& g) {
                        return !g.serial.empty() && g.serial == serial;
                      });
}

FAKE_NVML_EXPORT nvmlReturn_t
nvmlDeviceGetHandleByPciBusId_v2(const char* pciBusId, nvmlDevice_t* device) {
  return handle_by_pci("nvmlDeviceGetHandleByPciBusId_v2", pciBusId, device);
}
FAKE_NVML_EXPORT nvmlReturn_t
nvmlDeviceGetHandleByPciBusId(const char* pciBusId, nvmlDevice_t* device) {
  return handle_by_pci("nvmlDeviceGetHandleByPciBusId", pciBusId, device);
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device,
                                                 unsigned int* index) {
  DeviceCall call("nvmlDeviceGetIndex", device);
  if (call.status() != NVML_SUCCESS) return call.status();
  if (index == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *index = call.slot();
  return NVML_SUCCESS;
}
