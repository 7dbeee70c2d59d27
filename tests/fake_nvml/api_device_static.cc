// Device properties that come from the scenario header (gpus[] entries).
// An unknown (null/absent) header field answers NVML_ERROR_NOT_SUPPORTED.
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "pci_address.h"
#include "state.h"

using fake_nvml::DeviceCall;

namespace {

unsigned milliwatts(double watts) {
  return static_cast<unsigned>(std::lround(watts * 1000.0));
}

nvmlReturn_t string_property(const char* function, nvmlDevice_t device,
                             char* buf, unsigned length,
                             std::string gd::GpuInfo::*field) {
  DeviceCall call(function, device);
  if (call.status() != NVML_SUCCESS) return call.status();
  const std::string& value = call.info().*field;
  if (value.empty()) return NVML_ERROR_NOT_SUPPORTED;
  return fake_nvml::copy_string(value, buf, length);
}

// Answers an optional header number through `out`, converted by `conv`.
template <typename T, typename Out, typename Conv>
nvmlReturn_t number_property(const char* function, nvmlDevice_t device,
                             Out* out, gd::opt<T> gd::GpuInfo::*field,
                             Conv conv) {
  DeviceCall call(function, device);
  if (call.status() != NVML_SUCCESS) return call.status();
  if (out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const gd::opt<T>& value = call.info().*field;
  if (!value) return NVML_ERROR_NOT_SUPPORTED;
  *out = conv(*value);
  return NVML_SUCCESS;
}

unsigned as_uint(int v) { return static_cast<unsigned>(v); }

// PCI device id (device << 16 | vendor 0x10DE) of a few well-known boards;
// the data model does not carry it. Unknown names get device 0.
unsigned pci_device_id(const std::string& name) {
  struct Known {
    const char* name_part;
    unsigned device;
  };
  static constexpr Known kKnown[] = {
      {"A100-SXM4-80GB", 0x20B2}, {"A100-SXM4-40GB", 0x20B0},
      {"A100-PCIE-40GB", 0x20F1}, {"A100 80GB PCIe", 0x20B5},
      {"H100 80GB HBM3", 0x2330}, {"H100 PCIe", 0x2331},
      {"H200", 0x2335},
  };
  for (const auto& k : kKnown) {
    if (name.find(k.name_part) != std::string::npos)
      return (k.device << 16) | 0x10DE;
  }
  return 0x10DE;
}

nvmlReturn_t pci_info(const char* function, nvmlDevice_t device,
                      nvmlPciInfo_t* pci) {
  DeviceCall call(function, device);
  if (call.status() != NVML_SUCCESS) return call.status();
  if (pci == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  auto addr = fake_nvml::parse_pci_address(call.info().pci_bus_id);
  if (!addr) return NVML_ERROR_NOT_SUPPORTED;
  nvmlPciInfo_t out{};
  std::snprintf(out.busIdLegacy, sizeof out.busIdLegacy, "%s",
                fake_nvml::bus_id_legacy(*addr).c_str());
  std::snprintf(out.busId, sizeof out.busId, "%s",
                fake_nvml::bus_id(*addr).c_str());
  out.domain = addr->domain;
  out.bus = addr->bus;
  out.device = addr->device;
  out.pciDeviceId = pci_device_id(call.info().name);
  out.pciSubSystemId = 0;
  *pci = out;
  return NVML_SUCCESS;
}

// The layout the unversioned nvmlDeviceGetPciInfo fills (NVML before v2):
// the legacy bus id first, then the ids, then four reserved words. It is
// shorter than nvmlPciInfo_t, and an old client passes a buffer of this size.
struct PciInfoV1 {
  char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  unsigned int reserved0, reserved1, reserved2, reserved3;
};
static_assert(sizeof(PciInfoV1) == 52);
static_assert(offsetof(PciInfoV1, pciSubSystemId) ==
              offsetof(nvmlPciInfo_t, pciSubSystemId));

}  // namespace

// Name and UUID also answer for a MIG device: "NVIDIA A100-SXM4-80GB MIG
// 3g.40gb" and the instance's MIG-... UUID.
FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name,
                                                unsigned int length) {
  DeviceCall call("nvmlDeviceGetName", device, DeviceCall::Mig::kAccept);
  if (call.status() != NVML_SUCCESS) return call.status();
  if (call.info().name.empty()) return NVML_ERROR_NOT_SUPPORTED;
  if (call.is_mig())
    return fake_nvml::copy_string(
        call.info().name + " MIG " + call.mig().profile, name, length);
  return fake_nvml::copy_string(call.info().name, name, length);
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid,
                                                unsigned int length) {
  DeviceCall call("nvmlDeviceGetUUID", device, DeviceCall::Mig::kAccept);
  if (call.status() != NVML_SUCCESS) return call.status();
  const std::string& value = call.is_mig() ? call.mig().uuid : call.info().uuid;
  if (value.empty()) return NVML_ERROR_NOT_SUPPORTED;
  return fake_nvml::copy_string(value, uuid, length);
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t device,
                                                  char* serial,
                                                  unsigned int length) {
  return string_property("nvmlDeviceGetSerial", device, serial, length,
                         &gd::GpuInfo::serial);
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device,
                                                      nvmlPciInfo_t* pci) {
  return pci_info("nvmlDeviceGetPciInfo_v3", device, pci);
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t device,
                                                      nvmlPciInfo_t* pci) {
  return pci_info("nvmlDeviceGetPciInfo_v2", device, pci);
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t device,
                                                   nvmlPciInfo_t* pci) {
  nvmlPciInfo_t full{};
  nvmlReturn_t rc =
      pci_info("nvmlDeviceGetPciInfo", device, pci ? &full : nullptr);
  if (rc != NVML_SUCCESS) return rc;
  PciInfoV1 v1{};
  std::memcpy(v1.busId, full.busIdLegacy, sizeof v1.busId);
  v1.domain = full.domain;
  v1.bus = full.bus;
  v1.device = full.device;
  v1.pciDeviceId = full.pciDeviceId;
  v1.pciSubSystemId = full.pciSubSystemId;
  std::memcpy(static_cast<void*>(pci), &v1, sizeof v1);  // only the v1 bytes
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t
nvmlDeviceGetPowerManagementLimit(nvmlDevice_t device, unsigned int* limit) {
  return number_property("nvmlDeviceGetPowerManagementLimit", device, limit,
                         &gd::GpuInfo::power_limit_w, milliwatts);
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(
    nvmlDevice_t device, unsigned int* limit) {
  return number_property("nvmlDeviceGetPowerManagementDefaultLimit", device,
                         limit, &gd::GpuInfo::power_default_limit_w,
                         milliwatts);
}

FAKE_NVML_EXPORT nvmlReturn_t
nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int* limit) {
  return number_property("nvmlDeviceGetEnforcedPowerLimit", device, limit,
                         &gd::GpuInfo::power_limit_w, milliwatts);
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(
    nvmlDevice_t device, unsigned int* maxLinkGen) {
  return number_property("nvmlDeviceGetMaxPcieLinkGeneration", device,
                         maxLinkGen, &gd::GpuInfo::pcie_max_gen, as_uint);
}

FAKE_NVML_EXPORT nvmlReturn_t
nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t device, unsigned int* maxLinkWidth) {
  return number_property("nvmlDeviceGetMaxPcieLinkWidth", device, maxLinkWidth,
                         &gd::GpuInfo::pcie_max_width, as_uint);
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetTemperatureThreshold(
    nvmlDevice_t device, nvmlTemperatureThresholds_t thresholdType,
    unsigned int* temp) {
  const char* fn = "nvmlDeviceGetTemperatureThreshold";
  switch (thresholdType) {
    case NVML_TEMPERATURE_THRESHOLD_SHUTDOWN:
      return number_property(fn, device, temp, &gd::GpuInfo::temp_shutdown_c,
                             as_uint);
    case NVML_TEMPERATURE_THRESHOLD_SLOWDOWN:
      return number_property(fn, device, temp, &gd::GpuInfo::temp_slowdown_c,
                             as_uint);
    case NVML_TEMPERATURE_THRESHOLD_GPU_MAX:
      return number_property(fn, device, temp,
                             &gd::GpuInfo::temp_max_operating_c, as_uint);
    case NVML_TEMPERATURE_THRESHOLD_MEM_MAX:
      return number_property(fn, device, temp, &gd::GpuInfo::temp_mem_max_c,
                             as_uint);
    default: {
      DeviceCall call(fn, device);
      if (call.status() != NVML_SUCCESS) return call.status();
      if (temp == nullptr ||
          static_cast<unsigned>(thresholdType) >=
              static_cast<unsigned>(NVML_TEMPERATURE_THRESHOLD_COUNT)) {
        return NVML_ERROR_INVALID_ARGUMENT;
      }
      return NVML_ERROR_NOT_SUPPORTED;  // the data model has no such threshold
    }
  }
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device,
                                                        nvmlClockType_t type,
                                                        unsigned int* clock) {
  const char* fn = "nvmlDeviceGetMaxClockInfo";
  switch (type) {
    case NVML_CLOCK_GRAPHICS:  // graphics and SM run at one clock on these GPUs
    case NVML_CLOCK_SM:
      return number_property(fn, device, clock, &gd::GpuInfo::sm_clock_max_mhz,
                             as_uint);
    case NVML_CLOCK_MEM:
      return number_property(fn, device, clock, &gd::GpuInfo::mem_clock_max_mhz,
                             as_uint);
    default: {
      DeviceCall call(fn, device);
      if (call.status() != NVML_SUCCESS) return call.status();
      if (clock == nullptr || static_cast<unsigned>(type) >= NVML_CLOCK_COUNT) {
        return NVML_ERROR_INVALID_ARGUMENT;
      }
      return NVML_ERROR_NOT_SUPPORTED;  // video clock: not in the data model
    }
  }
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCudaComputeCapability(
    nvmlDevice_t device, int* major, int* minor) {
  DeviceCall call("nvmlDeviceGetCudaComputeCapability", device);
  if (call.status() != NVML_SUCCESS) return call.status();
  if (major == nullptr || minor == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  int ma = 0, mi = 0;
  if (std::sscanf(call.info().compute_capability.c_str(), "%d.%d", &ma, &mi) !=
      2) {
    return NVML_ERROR_NOT_SUPPORTED;
  }
  *major = ma;
  *minor = mi;
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t
nvmlDeviceGetArchitecture(nvmlDevice_t device, nvmlDeviceArchitecture_t* arch) {
  DeviceCall call("nvmlDeviceGetArchitecture", device);
  if (call.status() != NVML_SUCCESS) return call.status();
  if (arch == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const std::string& name = call.info().architecture;
  if (name.empty()) return NVML_ERROR_NOT_SUPPORTED;
  struct Known {
    std::string_view name;
    unsigned value;
  };
  static constexpr Known kArch[] = {
      {"kepler", NVML_DEVICE_ARCH_KEPLER},
      {"maxwell", NVML_DEVICE_ARCH_MAXWELL},
      {"pascal", NVML_DEVICE_ARCH_PASCAL},
      {"volta", NVML_DEVICE_ARCH_VOLTA},
      {"turing", NVML_DEVICE_ARCH_TURING},
      {"ampere", NVML_DEVICE_ARCH_AMPERE},
      {"ada", NVML_DEVICE_ARCH_ADA},
      {"hopper", NVML_DEVICE_ARCH_HOPPER},
      {"blackwell", NVML_DEVICE_ARCH_BLACKWELL},
  };
  *arch = NVML_DEVICE_ARCH_UNKNOWN;  // what NVML says for an architecture it
                                     // cannot name
  for (const auto& k : kArch) {
    if (k.name == name) *arch = k.value;
  }
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t device,
                                                   nvmlEnableState_t* current,
                                                   nvmlEnableState_t* pending) {
  DeviceCall call("nvmlDeviceGetEccMode", device);
  if (call.status() != NVML_SUCCESS) return call.status();
  if (current == nullptr || pending == nullptr)
    return NVML_ERROR_INVALID_ARGUMENT;
  const auto& ecc = call.info().ecc_enabled;
  if (!ecc) return NVML_ERROR_NOT_SUPPORTED;
  *current = *pending = *ecc ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device,
                                                   unsigned int* currentMode,
                                                   unsigned int* pendingMode) {
  DeviceCall call("nvmlDeviceGetMigMode", device);
  if (call.status() != NVML_SUCCESS) return call.status();
  if (currentMode == nullptr || pendingMode == nullptr)
    return NVML_ERROR_INVALID_ARGUMENT;
  const auto& mig = call.info().mig_enabled;
  if (!mig) return NVML_ERROR_NOT_SUPPORTED;
  *currentMode = *mig ? NVML_DEVICE_MIG_ENABLE : NVML_DEVICE_MIG_DISABLE;
  // A mode change waits for the next GPU reset.
  *pendingMode = call.info().mig_enabled_pending.value_or(*mig)
                     ? NVML_DEVICE_MIG_ENABLE
                     : NVML_DEVICE_MIG_DISABLE;
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t
nvmlDeviceGetPersistenceMode(nvmlDevice_t device, nvmlEnableState_t* mode) {
  return number_property("nvmlDeviceGetPersistenceMode", device, mode,
                         &gd::GpuInfo::persistence_mode, [](bool on) {
                           return on ? NVML_FEATURE_ENABLED
                                     : NVML_FEATURE_DISABLED;
                         });
}

FAKE_NVML_EXPORT nvmlReturn_t
nvmlDeviceGetComputeMode(nvmlDevice_t device, nvmlComputeMode_t* mode) {
  DeviceCall call("nvmlDeviceGetComputeMode", device);
  if (call.status() != NVML_SUCCESS) return call.status();
  if (mode == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const std::string& m = call.info().compute_mode;
  if (m == "default") {
    *mode = NVML_COMPUTEMODE_DEFAULT;
  } else if (m == "exclusive_process") {
    *mode = NVML_COMPUTEMODE_EXCLUSIVE_PROCESS;
  } else if (m == "prohibited") {
    *mode = NVML_COMPUTEMODE_PROHIBITED;
  } else {
    return NVML_ERROR_NOT_SUPPORTED;
  }
  return NVML_SUCCESS;
}

#ifndef FAKE_NVML_OLD_API
FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetNumaNodeId(nvmlDevice_t device,
                                                      unsigned int* node) {
  return number_property("nvmlDeviceGetNumaNodeId", device, node,
                         &gd::GpuInfo::numa_node, as_uint);
}
#endif

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device,
                                                       unsigned int* minor) {
  return number_property("nvmlDeviceGetMinorNumber", device, minor,
                         &gd::GpuInfo::minor_number, as_uint);
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetVbiosVersion(nvmlDevice_t device,
                                                        char* version,
                                                        unsigned int length) {
  return string_property("nvmlDeviceGetVbiosVersion", device, version, length,
                         &gd::GpuInfo::vbios_version);
}
