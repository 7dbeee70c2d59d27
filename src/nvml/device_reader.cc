// DeviceReader (device_reader.h): names of NVML's enums, error handling,
// and the static facts of a GPU (read_info). A sample's reads are in
// device_reader_sample.cc, the memory health in device_reader_memory.cc,
// processes in device_reader_processes.cc; GPM, MIG and NVLink in their own
// files.
#include "nvml/device_reader.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>

#include "model/limits.h"
#include "nvml/nvml_util.h"

namespace gd::nvml {

std::string recovery_action_name(unsigned long long action) {
  switch (action) {
    case NVML_GPU_RECOVERY_ACTION_NONE:
      return kRecoveryNone;
    case NVML_GPU_RECOVERY_ACTION_GPU_RESET:
      return kRecoveryGpuReset;
    case NVML_GPU_RECOVERY_ACTION_NODE_REBOOT:
      return kRecoveryNodeReboot;
    case NVML_GPU_RECOVERY_ACTION_DRAIN_P2P:
      return kRecoveryDrainP2p;
    case NVML_GPU_RECOVERY_ACTION_DRAIN_AND_RESET:
      return kRecoveryDrainAndReset;
    default:
      return "";  // a newer action this build does not know
  }
}

std::string architecture_name(nvmlDeviceArchitecture_t arch) {
  switch (arch) {
    case NVML_DEVICE_ARCH_KEPLER:
      return "kepler";
    case NVML_DEVICE_ARCH_MAXWELL:
      return "maxwell";
    case NVML_DEVICE_ARCH_PASCAL:
      return "pascal";
    case NVML_DEVICE_ARCH_VOLTA:
      return "volta";
    case NVML_DEVICE_ARCH_TURING:
      return "turing";
    case NVML_DEVICE_ARCH_AMPERE:
      return "ampere";
    case NVML_DEVICE_ARCH_ADA:
      return "ada";
    case NVML_DEVICE_ARCH_HOPPER:
      return "hopper";
    case NVML_DEVICE_ARCH_BLACKWELL:
      return "blackwell";
    default:
      return "";
  }
}

std::string compute_mode_name(unsigned mode) {
  switch (mode) {
    case NVML_COMPUTEMODE_DEFAULT:
      return "default";
    // EXCLUSIVE_THREAD is deprecated and means exclusive use as well; the
    // trace vocabulary has no separate word for it.
    case NVML_COMPUTEMODE_EXCLUSIVE_THREAD:
    case NVML_COMPUTEMODE_EXCLUSIVE_PROCESS:
      return "exclusive_process";
    case NVML_COMPUTEMODE_PROHIBITED:
      return "prohibited";
    default:
      return "";
  }
}

std::vector<std::string> clock_event_reason_names(unsigned long long bits) {
  static constexpr struct {
    unsigned long long bit;
    const char* name;
  } kReasons[] = {
      {nvmlClocksThrottleReasonGpuIdle, "gpu_idle"},
      {nvmlClocksThrottleReasonApplicationsClocksSetting,
       "applications_clocks_setting"},
      {nvmlClocksThrottleReasonSwPowerCap, "sw_power_cap"},
      {nvmlClocksThrottleReasonHwSlowdown, "hw_slowdown"},
      {nvmlClocksThrottleReasonSyncBoost, "sync_boost"},
      {nvmlClocksThrottleReasonSwThermalSlowdown, "sw_thermal_slowdown"},
      {nvmlClocksThrottleReasonHwThermalSlowdown, "hw_thermal_slowdown"},
      {nvmlClocksThrottleReasonHwPowerBrakeSlowdown, "hw_power_brake_slowdown"},
      {nvmlClocksThrottleReasonDisplayClockSetting, "display_clock_setting"},
  };
  std::vector<std::string> names;
  for (const auto& r : kReasons) {
    if (bits & r.bit) names.emplace_back(r.name);
  }
  return names;
}

std::string cuda_version_string(int version) {
  if (version <= 0) return "";
  return std::to_string(version / 1000) + "." +
         std::to_string(version % 1000 / 10);
}

DeviceReader::DeviceReader(const NvmlLibrary& lib, int index,
                           std::string sysfs_root,
                           std::chrono::seconds error_interval,
                           std::chrono::milliseconds slow_interval)
    : lib_(lib),
      f_(lib.fn()),
      index_(index),
      sysfs_root_(std::move(sysfs_root)),
      error_interval_(error_interval),
      slow_interval_(slow_interval) {}

DeviceReader::~DeviceReader() {
  free_gpm(gpm_gpu_);
  for (auto& [gi, pair] : gpm_instances_) free_gpm(pair);
}

bool DeviceReader::ok(nvmlReturn_t rc, std::string_view function) {
  switch (rc) {
    case NVML_SUCCESS:
      return true;
    case NVML_ERROR_GPU_IS_LOST:
      lost_now_ = true;
      return false;
    case NVML_ERROR_NOT_SUPPORTED:
    case NVML_ERROR_FUNCTION_NOT_FOUND:
    case NVML_ERROR_NO_DATA:
      return false;
    default:
      break;
  }
  if (!events_) return false;  // static info: no event stream
  auto now = std::chrono::steady_clock::now();
  auto it = last_error_.find(function);
  if (it != last_error_.end() && now - it->second < error_interval_)
    return false;
  last_error_[function] = now;
  Event e;
  e.kind = "nvml_error";
  e.gpu = index_;
  e.text = "GPU " + std::to_string(index_) + ": " + std::string(function) +
           " failed: " + lib_.error_string(rc);
  events_->push_back(std::move(e));
  return false;
}

bool DeviceReader::read_ok(nvmlReturn_t rc, std::string_view function,
                           std::initializer_list<const char*> fields) {
  if (ok(rc, function)) return true;
  if (read_errors_ && is_failed_read(rc)) {
    for (const char* f : fields) read_errors_->emplace_back(f);
  }
  return false;
}

bool DeviceReader::acquire_handle() {
  if (dev_) return true;
  if (!f_.nvmlDeviceGetHandleByIndex_v2) return false;
  nvmlDevice_t dev = nullptr;
  if (!ok(f_.nvmlDeviceGetHandleByIndex_v2(static_cast<unsigned>(index_), &dev),
          "nvmlDeviceGetHandleByIndex_v2")) {
    return false;
  }
  dev_ = dev;
  return true;
}

// ---- static facts -----------------------------------------------------------

// Memory info through nvmlDeviceGetMemoryInfo_v2 when the library has it
// (it counts reserved memory apart from used), else the plain call.
nvmlReturn_t DeviceReader::read_memory(MemoryInfo& out) {
  return first_available(
      memory_variant_,
      [&] {
        nvmlMemory_v2_t mem{};
        mem.version = nvmlMemory_v2;
        nvmlReturn_t r = call_if(f_.nvmlDeviceGetMemoryInfo_v2, dev_, &mem);
        out = {mem.total, mem.used, mem.reserved};
        // A library that has _v2 but not this struct version: use plain.
        return r == NVML_ERROR_ARGUMENT_VERSION_MISMATCH
                   ? NVML_ERROR_FUNCTION_NOT_FOUND
                   : r;
      },
      [&] {
        nvmlMemory_t mem{};
        nvmlReturn_t r = call_if(f_.nvmlDeviceGetMemoryInfo, dev_, &mem);
        out = {mem.total, mem.used, std::nullopt};
        return r;
      });
}

void DeviceReader::read_pci(GpuInfo& info) {
  nvmlPciInfo_t pci;
  std::memset(&pci, 0, sizeof pci);
  int variant = 0;  // 0:_v3 1:_v2 2:plain (read once, so not remembered)
  nvmlReturn_t rc = first_available(
      variant, [&] { return call_if(f_.nvmlDeviceGetPciInfo_v3, dev_, &pci); },
      [&] { return call_if(f_.nvmlDeviceGetPciInfo_v2, dev_, &pci); },
      [&] { return call_if(f_.nvmlDeviceGetPciInfo, dev_, &pci); });
  // The plain function fills an older, shorter struct: busId is not set.
  const bool legacy = variant == 2;
  if (!ok(rc, "nvmlDeviceGetPciInfo")) return;
  std::string bus_id = legacy ? "" : from_buffer(pci.busId, sizeof pci.busId);
  if (bus_id.empty()) {
    // NVML's own format for the bus id (8-hex-digit domain, function 0).
    char buf[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
    std::snprintf(buf, sizeof buf, "%08X:%02X:%02X.0", pci.domain, pci.bus,
                  pci.device);
    bus_id = buf;
  }
  info.pci_bus_id = bus_id;
}

std::optional<int> DeviceReader::numa_node_from_sysfs(
    const GpuInfo& info) const {
  // "00000000:07:00.0" -> sysfs name "0000:07:00.0" (4-digit domain, lower
  // case).
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  if (std::sscanf(info.pci_bus_id.c_str(), "%x:%x:%x.%x", &domain, &bus,
                  &device, &function) != 4) {
    return std::nullopt;
  }
  char name[32];
  std::snprintf(name, sizeof name, "%04x:%02x:%02x.%x", domain & 0xffff, bus,
                device, function);
  std::ifstream in(sysfs_root_ + "/bus/pci/devices/" + name + "/numa_node");
  int node = -1;
  if (!(in >> node) || node < 0) return std::nullopt;  // -1: no NUMA affinity
  return node;
}

GpuInfo DeviceReader::read_info() {
  events_ = nullptr;
  lost_now_ = false;
  GpuInfo info;
  info.index = index_;
  if (!acquire_handle()) return info;

  char buf[NVML_DEVICE_UUID_V2_BUFFER_SIZE];  // the largest string we read
  auto read_string = [&](auto fn, unsigned size,
                         std::string_view name) -> std::string {
    std::memset(buf, 0, sizeof buf);
    if (fn && ok(fn(dev_, buf, size), name)) return from_buffer(buf, size);
    return "";
  };
  info.name = read_string(f_.nvmlDeviceGetName, NVML_DEVICE_NAME_V2_BUFFER_SIZE,
                          "nvmlDeviceGetName");
  info.uuid = read_string(f_.nvmlDeviceGetUUID, NVML_DEVICE_UUID_V2_BUFFER_SIZE,
                          "nvmlDeviceGetUUID");
  info.serial =
      read_string(f_.nvmlDeviceGetSerial, NVML_DEVICE_SERIAL_BUFFER_SIZE,
                  "nvmlDeviceGetSerial");
  read_pci(info);

  MemoryInfo mem;
  nvmlReturn_t rc = read_memory(mem);
  if (ok(rc, "nvmlDeviceGetMemoryInfo")) info.memory_total_bytes = mem.total;

  unsigned u = 0;
  auto uint_of = [&](auto fn,
                     std::string_view name) -> std::optional<unsigned> {
    if (fn && ok(fn(dev_, &u), name)) return u;
    return std::nullopt;
  };
  read_limits(info);
  if (auto v =
          uint_of(f_.nvmlDeviceGetMinorNumber, "nvmlDeviceGetMinorNumber")) {
    info.minor_number = static_cast<int>(*v);
  }
  info.vbios_version = read_string(f_.nvmlDeviceGetVbiosVersion,
                                   NVML_DEVICE_VBIOS_VERSION_BUFFER_SIZE,
                                   "nvmlDeviceGetVbiosVersion");
  nvmlBAR1Memory_t bar1{};
  if (f_.nvmlDeviceGetBAR1MemoryInfo &&
      ok(f_.nvmlDeviceGetBAR1MemoryInfo(dev_, &bar1),
         "nvmlDeviceGetBAR1MemoryInfo")) {
    info.bar1_total_bytes = bar1.bar1Total;
  }
  if (f_.nvmlDeviceGetMaxClockInfo) {
    if (ok(f_.nvmlDeviceGetMaxClockInfo(dev_, NVML_CLOCK_SM, &u),
           "nvmlDeviceGetMaxClockInfo")) {
      info.sm_clock_max_mhz = static_cast<int>(u);
    }
    if (ok(f_.nvmlDeviceGetMaxClockInfo(dev_, NVML_CLOCK_MEM, &u),
           "nvmlDeviceGetMaxClockInfo")) {
      info.mem_clock_max_mhz = static_cast<int>(u);
    }
  }
  int major = 0, minor = 0;
  if (f_.nvmlDeviceGetCudaComputeCapability &&
      ok(f_.nvmlDeviceGetCudaComputeCapability(dev_, &major, &minor),
         "nvmlDeviceGetCudaComputeCapability")) {
    info.compute_capability =
        std::to_string(major) + "." + std::to_string(minor);
  }
  nvmlDeviceArchitecture_t arch = NVML_DEVICE_ARCH_UNKNOWN;
  if (f_.nvmlDeviceGetArchitecture &&
      ok(f_.nvmlDeviceGetArchitecture(dev_, &arch),
         "nvmlDeviceGetArchitecture")) {
    info.architecture = architecture_name(arch);
  }
  nvmlEnableState_t current = NVML_FEATURE_DISABLED,
                    pending = NVML_FEATURE_DISABLED;
  if (f_.nvmlDeviceGetEccMode &&
      ok(f_.nvmlDeviceGetEccMode(dev_, &current, &pending),
         "nvmlDeviceGetEccMode")) {
    info.ecc_enabled = current == NVML_FEATURE_ENABLED;
  }
  unsigned mig_current = 0, mig_pending = 0;
  if (f_.nvmlDeviceGetMigMode &&
      ok(f_.nvmlDeviceGetMigMode(dev_, &mig_current, &mig_pending),
         "nvmlDeviceGetMigMode")) {
    info.mig_enabled = mig_current == NVML_DEVICE_MIG_ENABLE;
    info.mig_enabled_pending = mig_pending == NVML_DEVICE_MIG_ENABLE;
    mig_enabled_ = *info.mig_enabled;
  }
  nvmlEnableState_t persistence = NVML_FEATURE_DISABLED;
  if (f_.nvmlDeviceGetPersistenceMode &&
      ok(f_.nvmlDeviceGetPersistenceMode(dev_, &persistence),
         "nvmlDeviceGetPersistenceMode")) {
    info.persistence_mode = persistence == NVML_FEATURE_ENABLED;
  }
  // Read as the unsigned int NVML writes: a mode newer than this build (or
  // a lying library) is a value nvmlComputeMode_t cannot hold in C++.
  unsigned mode = NVML_COMPUTEMODE_DEFAULT;
  if (f_.nvmlDeviceGetComputeMode &&
      ok(f_.nvmlDeviceGetComputeMode(
             dev_, reinterpret_cast<nvmlComputeMode_t*>(&mode)),
         "nvmlDeviceGetComputeMode")) {
    info.compute_mode = compute_mode_name(mode);
  }
  // nvmlDeviceGetNumaNodeId answers only where the GPU's memory is itself a
  // NUMA node (coherent CPU-GPU systems); elsewhere it is NOT_SUPPORTED and
  // the node the GPU's PCI device is attached to comes from sysfs.
  unsigned node = 0;
  if (f_.nvmlDeviceGetNumaNodeId &&
      ok(f_.nvmlDeviceGetNumaNodeId(dev_, &node), "nvmlDeviceGetNumaNodeId")) {
    info.numa_node = static_cast<int>(node);
  } else {
    info.numa_node = numa_node_from_sysfs(info);
  }
  read_gpm_info(info);
  read_mig_info(info);
  read_nvlink_info(info);
  return info;
}

// Power limits, PCIe link maxima and temperature thresholds.
void DeviceReader::read_limits(GpuInfo& info) {
  unsigned u = 0;
  auto uint_of = [&](auto fn,
                     std::string_view name) -> std::optional<unsigned> {
    if (fn && ok(fn(dev_, &u), name)) return u;
    return std::nullopt;
  };
  if (auto mw = uint_of(f_.nvmlDeviceGetPowerManagementLimit,
                        "nvmlDeviceGetPowerManagementLimit")) {
    // Past what a GPU can draw (model/sample.h): not a limit to keep.
    if (*mw / 1000.0 <= kMaxPowerLimitW) info.power_limit_w = *mw / 1000.0;
  }
  if (auto mw = uint_of(f_.nvmlDeviceGetPowerManagementDefaultLimit,
                        "nvmlDeviceGetPowerManagementDefaultLimit")) {
    if (*mw / 1000.0 <= kMaxPowerLimitW)
      info.power_default_limit_w = *mw / 1000.0;
  }
  if (auto v = uint_of(f_.nvmlDeviceGetMaxPcieLinkGeneration,
                       "nvmlDeviceGetMaxPcieLinkGeneration")) {
    info.pcie_max_gen = static_cast<int>(*v);
  }
  if (auto v = uint_of(f_.nvmlDeviceGetMaxPcieLinkWidth,
                       "nvmlDeviceGetMaxPcieLinkWidth")) {
    info.pcie_max_width = static_cast<int>(*v);
  }
  if (f_.nvmlDeviceGetTemperatureThreshold) {
    if (ok(f_.nvmlDeviceGetTemperatureThreshold(
               dev_, NVML_TEMPERATURE_THRESHOLD_SLOWDOWN, &u),
           "nvmlDeviceGetTemperatureThreshold")) {
      info.temp_slowdown_c = static_cast<int>(u);
    }
    if (ok(f_.nvmlDeviceGetTemperatureThreshold(
               dev_, NVML_TEMPERATURE_THRESHOLD_SHUTDOWN, &u),
           "nvmlDeviceGetTemperatureThreshold")) {
      info.temp_shutdown_c = static_cast<int>(u);
    }
  }
  if (f_.nvmlDeviceGetTemperatureThreshold) {
    if (ok(f_.nvmlDeviceGetTemperatureThreshold(
               dev_, NVML_TEMPERATURE_THRESHOLD_GPU_MAX, &u),
           "nvmlDeviceGetTemperatureThreshold")) {
      info.temp_max_operating_c = static_cast<int>(u);
    }
    if (ok(f_.nvmlDeviceGetTemperatureThreshold(
               dev_, NVML_TEMPERATURE_THRESHOLD_MEM_MAX, &u),
           "nvmlDeviceGetTemperatureThreshold")) {
      info.temp_mem_max_c = static_cast<int>(u);
    }
  }
}

}  // namespace gd::nvml
