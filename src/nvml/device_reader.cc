#include "nvml/device_reader.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <thread>

#include "nvml/nvml_util.h"

namespace gd::nvml {

namespace {

// NVML reports PCIe throughput in KB/s; KB is taken as 1024 bytes, as NVML
// uses "KB" for binary kilobytes elsewhere (memory sizes).
constexpr uint64_t kBytesPerNvmlKilobyte = 1024;
// How many extra process slots to allow for processes that start between
// the size query and the read.
constexpr unsigned kProcessSlack = 8;
constexpr int kProcessListAttempts = 4;

// usedGpuMemory == NVML_VALUE_NOT_AVAILABLE (-1 as unsigned long long).
constexpr unsigned long long kNotAvailable =
    static_cast<unsigned long long>(NVML_VALUE_NOT_AVAILABLE);

// Tries the variants of one function newest first, starting at `variant`
// (variants found missing earlier are skipped), and returns the first answer
// that is not FUNCTION_NOT_FOUND. A variant that is missing (no symbol, or
// the driver says FUNCTION_NOT_FOUND) advances `variant` for good.
template <typename... Calls>
nvmlReturn_t first_available(int& variant, Calls&&... calls) {
  nvmlReturn_t rc = NVML_ERROR_FUNCTION_NOT_FOUND;
  int i = 0;
  auto try_one = [&](auto& call) {
    if (i++ < variant) return false;
    rc = call();
    if (rc != NVML_ERROR_FUNCTION_NOT_FOUND) return true;
    variant = i;
    return false;
  };
  (try_one(calls) || ...);
  return rc;
}

}  // namespace

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

std::string compute_mode_name(nvmlComputeMode_t mode) {
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
  if (auto mw = uint_of(f_.nvmlDeviceGetPowerManagementLimit,
                        "nvmlDeviceGetPowerManagementLimit")) {
    info.power_limit_w = *mw / 1000.0;
  }
  if (auto mw = uint_of(f_.nvmlDeviceGetPowerManagementDefaultLimit,
                        "nvmlDeviceGetPowerManagementDefaultLimit")) {
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
  nvmlComputeMode_t mode = NVML_COMPUTEMODE_DEFAULT;
  if (f_.nvmlDeviceGetComputeMode &&
      ok(f_.nvmlDeviceGetComputeMode(dev_, &mode),
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

// ---- one sample -------------------------------------------------------------

template <typename Info, typename Fn>
nvmlReturn_t DeviceReader::list_processes(Fn fn, std::vector<Info>& buf,
                                          std::vector<ProcessEntry>& out) {
  if (!fn) return NVML_ERROR_FUNCTION_NOT_FOUND;
  // Two-call protocol: a too-small buffer gives INSUFFICIENT_SIZE and the
  // needed count. Processes can start in between, so allow slack and retry a
  // bounded number of times.
  if (buf.size() < kProcessSlack) buf.resize(kProcessSlack);
  for (int attempt = 0; attempt < kProcessListAttempts; ++attempt) {
    unsigned count = static_cast<unsigned>(buf.size());
    nvmlReturn_t rc = fn(dev_, &count, buf.data());
    if (rc == NVML_ERROR_INSUFFICIENT_SIZE) {
      buf.resize(std::max<size_t>(count, buf.size()) + kProcessSlack);
      continue;
    }
    if (rc == NVML_SUCCESS) {
      count = std::min<unsigned>(count, static_cast<unsigned>(buf.size()));
      for (unsigned i = 0; i < count; ++i) {
        ProcessEntry e{buf[i].pid, buf[i].usedGpuMemory};
        if constexpr (requires { buf[i].gpuInstanceId; }) {
          e.gi = buf[i].gpuInstanceId;
          e.ci = buf[i].computeInstanceId;
        }
        out.push_back(e);
      }
    }
    return rc;
  }
  return NVML_ERROR_INSUFFICIENT_SIZE;
}

void DeviceReader::merge_processes(const std::vector<ProcessEntry>& entries,
                                   const char* type,
                                   std::vector<GpuProcess>& out) {
  const size_t before = out.size();
  for (const ProcessEntry& p : entries) {
    std::optional<uint64_t> used;
    if (p.used != kNotAvailable) used = p.used;
    GpuProcess* found = nullptr;
    for (auto& q : out) {
      if (q.pid == p.pid) found = &q;
    }
    if (!found) {
      GpuProcess gp;
      gp.pid = p.pid;
      gp.used_bytes = used;
      gp.type = type;
      if (p.gi != kNoInstance) gp.gi_id = p.gi;
      if (p.ci != kNoInstance) gp.ci_id = p.ci;
      out.push_back(std::move(gp));
    } else if (found >= out.data() + before) {
      // Listed more than once by one call (one entry per MIG instance): the
      // memory adds up; unknown stays unknown.
      if (found->used_bytes && used) {
        *found->used_bytes += *used;
      } else {
        found->used_bytes.reset();
      }
    } else {
      // Listed as compute and as graphics: one process, one memory figure.
      found->type = "compute+graphics";
      if (used && (!found->used_bytes || *used > *found->used_bytes))
        found->used_bytes = used;
    }
  }
}

std::optional<std::vector<GpuProcess>> DeviceReader::read_processes() {
  std::vector<GpuProcess> procs;
  bool any_listed = false;
  std::vector<ProcessEntry>& entries = process_entries_;

  last_process_rc_ = NVML_SUCCESS;
  entries.clear();
  nvmlReturn_t rc = first_available(
      compute_procs_variant_,
      [&] {
        return list_processes(f_.nvmlDeviceGetComputeRunningProcesses_v3,
                              procs_v3_, entries);
      },
      [&] {
        return list_processes(f_.nvmlDeviceGetComputeRunningProcesses_v2,
                              procs_v2_, entries);
      },
      [&] {
        return list_processes(f_.nvmlDeviceGetComputeRunningProcesses,
                              procs_v1_, entries);
      });
  if (ok(rc, "nvmlDeviceGetComputeRunningProcesses")) {
    any_listed = true;
    merge_processes(entries, "compute", procs);
  } else if (is_failed_read(rc)) {
    last_process_rc_ = rc;
  }
  if (lost_now_) return std::nullopt;

  entries.clear();
  rc = first_available(
      graphics_procs_variant_,
      [&] {
        return list_processes(f_.nvmlDeviceGetGraphicsRunningProcesses_v3,
                              procs_v3_, entries);
      },
      [&] {
        return list_processes(f_.nvmlDeviceGetGraphicsRunningProcesses_v2,
                              procs_v2_, entries);
      },
      [&] {
        return list_processes(f_.nvmlDeviceGetGraphicsRunningProcesses,
                              procs_v1_, entries);
      });
  if (ok(rc, "nvmlDeviceGetGraphicsRunningProcesses")) {
    any_listed = true;
    merge_processes(entries, "graphics", procs);
  } else if (is_failed_read(rc)) {
    last_process_rc_ = rc;
  }
  if (!any_listed) return std::nullopt;
  return procs;
}

std::vector<uint32_t> DeviceReader::read_pids() {
  events_ = nullptr;
  read_errors_ = nullptr;
  lost_now_ = false;
  std::vector<uint32_t> pids;
  if (!acquire_handle()) return pids;
  if (auto procs = read_processes())
    for (const auto& p : *procs) pids.push_back(p.pid);
  return pids;
}

GpuSample DeviceReader::read_sample(std::vector<Event>& events) {
  events_ = &events;
  lost_now_ = false;
  GpuSample s;
  s.index = index_;
  read_errors_ = &s.read_errors;
  if (acquire_handle()) read_values(s);
  read_errors_ = nullptr;
  if (lost_now_) {
    if (!lost_reported_) {
      Event e;
      e.kind = "gpu_lost";
      e.gpu = index_;
      e.text =
          "GPU " + std::to_string(index_) + ": NVML reports the GPU is lost";
      events.push_back(std::move(e));
      lost_reported_ = true;
    }
    GpuSample lost;
    lost.index = index_;
    lost.lost = true;
    events_ = nullptr;
    return lost;
  }
  lost_reported_ = false;  // answering again: a later loss is a new event
  events_ = nullptr;
  return s;
}

template <typename Fn, typename... Args>
std::optional<unsigned> DeviceReader::read_uint(Fn fn, std::string_view name,
                                                const char* field,
                                                Args... args) {
  // Every read is skipped once the GPU has reported itself lost.
  if (!fn || lost_now_) return std::nullopt;
  unsigned u = 0;
  if (read_ok(fn(dev_, args..., &u), name, {field})) return u;
  return std::nullopt;
}

void DeviceReader::read_values(GpuSample& s) {
  if (f_.nvmlDeviceGetUtilizationRates) {
    nvmlUtilization_t util{};
    if (read_ok(f_.nvmlDeviceGetUtilizationRates(dev_, &util),
                "nvmlDeviceGetUtilizationRates",
                {"util_pct", "mem_util_pct"})) {
      s.util_pct = util.gpu;
      s.mem_util_pct = util.memory;
    }
  }
  if (lost_now_) return;  // the first call tells: don't wait on the rest
  slow_now_ = slow_due();
  // The PCIe counters block 20 ms in the driver while using almost no CPU:
  // they are watched beside every other read of this sample (which adds up
  // to ~9 ms on an H200), so a sample that makes every read takes ~21 ms
  // instead of ~30. Joined before the sample is handed out.
  PcieThroughputRead pcie;
  if (slow_now_) pcie.start(f_.nvmlDeviceGetPcieThroughput, dev_);
  read_other_values(s);
  pcie.join();
  if (slow_now_ && pcie.started()) finish_pcie_throughput(pcie, s);
}

void DeviceReader::read_other_values(GpuSample& s) {
  MemoryInfo mem;
  nvmlReturn_t rc = read_memory(mem);
  if (read_ok(rc, "nvmlDeviceGetMemoryInfo",
              {"mem_used_bytes", "mem_reserved_bytes"})) {
    s.mem_used_bytes = mem.used;
    s.mem_reserved_bytes = mem.reserved;
  }

  if (auto v =
          read_uint(f_.nvmlDeviceGetTemperature, "nvmlDeviceGetTemperature",
                    "temp_c", NVML_TEMPERATURE_GPU)) {
    s.temp_c = static_cast<int>(*v);
  }
  read_field_values(s);
  read_slow_values(s);
  if (auto mw = read_uint(f_.nvmlDeviceGetPowerUsage, "nvmlDeviceGetPowerUsage",
                          "power_w")) {
    s.power_w = *mw / 1000.0;
  }
  if (fan_supported_ && f_.nvmlDeviceGetFanSpeed && !lost_now_) {
    unsigned pct = 0;
    const nvmlReturn_t fan_rc = f_.nvmlDeviceGetFanSpeed(dev_, &pct);
    if (fan_rc == NVML_ERROR_NOT_SUPPORTED) fan_supported_ = false;
    if (read_ok(fan_rc, "nvmlDeviceGetFanSpeed", {"fan_pct"})) s.fan_pct = pct;
  }
  if (auto v = read_uint(f_.nvmlDeviceGetClockInfo, "nvmlDeviceGetClockInfo",
                         "sm_clock_mhz", NVML_CLOCK_SM)) {
    s.sm_clock_mhz = static_cast<int>(*v);
  }
  if (auto v = read_uint(f_.nvmlDeviceGetClockInfo, "nvmlDeviceGetClockInfo",
                         "mem_clock_mhz", NVML_CLOCK_MEM)) {
    s.mem_clock_mhz = static_cast<int>(*v);
  }
  if (f_.nvmlDeviceGetPerformanceState && !lost_now_) {
    nvmlPstates_t p = NVML_PSTATE_UNKNOWN;
    if (read_ok(f_.nvmlDeviceGetPerformanceState(dev_, &p),
                "nvmlDeviceGetPerformanceState", {"pstate"}) &&
        p >= NVML_PSTATE_0 && p <= NVML_PSTATE_15) {
      s.pstate = static_cast<int>(p);
    }
  }
  if (!lost_now_) {
    unsigned long long reasons = 0;
    rc = first_available(
        clock_reasons_variant_,
        [&] {
          return call_if(f_.nvmlDeviceGetCurrentClocksEventReasons, dev_,
                         &reasons);
        },
        [&] {
          return call_if(f_.nvmlDeviceGetCurrentClocksThrottleReasons, dev_,
                         &reasons);
        });
    if (read_ok(rc, "nvmlDeviceGetCurrentClocksEventReasons",
                {"clock_event_reasons"})) {
      s.clock_event_reasons = clock_event_reason_names(reasons);
    }
  }
  if (auto v = read_uint(f_.nvmlDeviceGetCurrPcieLinkGeneration,
                         "nvmlDeviceGetCurrPcieLinkGeneration", "pcie_gen")) {
    s.pcie_gen = static_cast<int>(*v);
  }
  if (auto v = read_uint(f_.nvmlDeviceGetCurrPcieLinkWidth,
                         "nvmlDeviceGetCurrPcieLinkWidth", "pcie_width")) {
    s.pcie_width = static_cast<int>(*v);
  }
  read_memory_health(s);
  if (lost_now_) return;
  read_engine_utilization(s);
  read_nvlinks(s);
  read_fabric(s);
  if (lost_now_) return;
  if (mig_enabled_) s.mig_instances = read_mig_instances(true);
  if (gpm_supported_ && !lost_now_) read_gpm(gpm_gpu_, nullptr, s.gpm, true);
  if (lost_now_) return;
  s.processes = read_processes();
  if (!s.processes && read_errors_ && !lost_now_ &&
      is_failed_read(last_process_rc_)) {
    read_errors_->emplace_back("processes");
  }
  if (s.processes && !lost_now_) read_process_utilization(*s.processes);
}

bool DeviceReader::slow_due() const {
  return !slow_read_at_ ||
         std::chrono::steady_clock::now() - *slow_read_at_ >= slow_interval_;
}

void DeviceReader::read_slow_values(GpuSample& s) {
  SlowValues& v = slow_;
  if (slow_now_ && !lost_now_) {
    slow_read_at_ = std::chrono::steady_clock::now();
    v = SlowValues{};
    // Collected on their own, so that the samples until the next read
    // repeat these fields' errors with their values.
    std::vector<std::string>* sample_errors = read_errors_;
    read_errors_ = &v.read_errors;
    if (f_.nvmlDeviceGetMarginTemperature && !lost_now_) {
      nvmlMarginTemperature_t margin{};
      margin.version = nvmlMarginTemperature_v1;
      if (read_ok(f_.nvmlDeviceGetMarginTemperature(dev_, &margin),
                  "nvmlDeviceGetMarginTemperature", {"temp_limit_margin_c"}))
        v.temp_limit_margin_c = margin.marginTemperature;
    }
    if (f_.nvmlDeviceGetTotalEnergyConsumption && !lost_now_) {
      unsigned long long mj = 0;
      if (read_ok(f_.nvmlDeviceGetTotalEnergyConsumption(dev_, &mj),
                  "nvmlDeviceGetTotalEnergyConsumption", {"energy_mj_total"}))
        v.energy_mj_total = mj;
    }
    if (auto n =
            read_uint(f_.nvmlDeviceGetPcieReplayCounter,
                      "nvmlDeviceGetPcieReplayCounter", "pcie_replay_total"))
      v.pcie_replay_total = *n;
    if (f_.nvmlDeviceGetBAR1MemoryInfo && !lost_now_) {
      nvmlBAR1Memory_t bar1{};
      if (read_ok(f_.nvmlDeviceGetBAR1MemoryInfo(dev_, &bar1),
                  "nvmlDeviceGetBAR1MemoryInfo", {"bar1_used_bytes"}))
        v.bar1_used_bytes = bar1.bar1Used;
    }
    read_errors_ = sample_errors;
  }
  s.temp_limit_margin_c = v.temp_limit_margin_c;
  s.energy_mj_total = v.energy_mj_total;
  s.pcie_tx_bytes_per_s = v.pcie_tx_bytes_per_s;
  s.pcie_rx_bytes_per_s = v.pcie_rx_bytes_per_s;
  s.pcie_replay_total = v.pcie_replay_total;
  s.bar1_used_bytes = v.bar1_used_bytes;
  if (read_errors_)
    read_errors_->insert(read_errors_->end(), v.read_errors.begin(),
                         v.read_errors.end());
}

// Each direction is a byte counter the driver watches for 20 ms, blocking
// the caller (measured on an H100: 20.8 ms wall, 0.7 ms CPU): each is read
// on a thread of its own, at once, while the worker makes the sample's
// other reads. Only the NVML call runs there; its answer is checked on the
// worker after the join. If the driver hangs, the worker is abandoned with
// the helpers, as for any other read.
void DeviceReader::PcieThroughputRead::start(PcieFn fn, nvmlDevice_t dev) {
  if (!fn) return;
  started_ = true;
  tx_ = std::jthread(
      [this, fn, dev] { tx_rc_ = fn(dev, NVML_PCIE_UTIL_TX_BYTES, &tx_kb_); });
  rx_ = std::jthread(
      [this, fn, dev] { rx_rc_ = fn(dev, NVML_PCIE_UTIL_RX_BYTES, &rx_kb_); });
}

void DeviceReader::PcieThroughputRead::join() {
  if (tx_.joinable()) tx_.join();
  if (rx_.joinable()) rx_.join();
}

void DeviceReader::finish_pcie_throughput(const PcieThroughputRead& pcie,
                                          GpuSample& s) {
  if (lost_now_) return;
  // Kept with the other costly reads' values and errors, for the samples
  // until the next refresh.
  SlowValues& v = slow_;
  std::vector<std::string>* sample_errors = read_errors_;
  const size_t known_errors = v.read_errors.size();
  read_errors_ = &v.read_errors;
  if (read_ok(pcie.tx_rc(), "nvmlDeviceGetPcieThroughput",
              {"pcie_tx_bytes_per_s"}))
    v.pcie_tx_bytes_per_s = uint64_t{pcie.tx_kb()} * kBytesPerNvmlKilobyte;
  if (!lost_now_ && read_ok(pcie.rx_rc(), "nvmlDeviceGetPcieThroughput",
                            {"pcie_rx_bytes_per_s"}))
    v.pcie_rx_bytes_per_s = uint64_t{pcie.rx_kb()} * kBytesPerNvmlKilobyte;
  read_errors_ = sample_errors;
  s.pcie_tx_bytes_per_s = v.pcie_tx_bytes_per_s;
  s.pcie_rx_bytes_per_s = v.pcie_rx_bytes_per_s;
  if (read_errors_)
    read_errors_->insert(
        read_errors_->end(),
        v.read_errors.begin() + static_cast<std::ptrdiff_t>(known_errors),
        v.read_errors.end());
}

// nvmlDeviceGetFieldValues, one call for the fields read that way.
void DeviceReader::read_field_values(GpuSample& s) {
  if (!f_.nvmlDeviceGetFieldValues || lost_now_) return;
  nvmlFieldValue_t fv[2];
  std::memset(fv, 0, sizeof fv);
  fv[0].fieldId = NVML_FI_DEV_MEMORY_TEMP;
  fv[1].fieldId = NVML_FI_DEV_GET_GPU_RECOVERY_ACTION;
  if (!read_ok(f_.nvmlDeviceGetFieldValues(dev_, 2, fv),
               "nvmlDeviceGetFieldValues", {"mem_temp_c", "recovery_action"})) {
    return;
  }
  if (read_ok(fv[0].nvmlReturn,
              "nvmlDeviceGetFieldValues(NVML_FI_DEV_MEMORY_TEMP)",
              {"mem_temp_c"})) {
    if (auto t = field_as_double(fv[0])) s.mem_temp_c = static_cast<int>(*t);
  }
  if (read_ok(fv[1].nvmlReturn,
              "nvmlDeviceGetFieldValues(NVML_FI_DEV_GET_GPU_RECOVERY_ACTION)",
              {"recovery_action"})) {
    if (auto a = field_as_double(fv[1]); a && *a >= 0) {
      s.recovery_action =
          recovery_action_name(static_cast<unsigned long long>(*a));
    }
  }
}

// ECC counters, SRAM status, retired pages and remapped rows.
void DeviceReader::read_memory_health(GpuSample& s) {
  if (f_.nvmlDeviceGetTotalEccErrors) {
    struct EccRead {
      nvmlMemoryErrorType_t type;
      nvmlEccCounterType_t counter;
      const char* field;
      opt<uint64_t> GpuSample::*out;
    };
    static constexpr EccRead kTotals[] = {
        {NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC,
         "ecc_sbe_volatile_total", &GpuSample::ecc_sbe_volatile_total},
        {NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC,
         "ecc_dbe_volatile_total", &GpuSample::ecc_dbe_volatile_total},
        {NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_AGGREGATE_ECC,
         "ecc_sbe_aggregate_total", &GpuSample::ecc_sbe_aggregate_total},
        {NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC,
         "ecc_dbe_aggregate_total", &GpuSample::ecc_dbe_aggregate_total},
    };
    for (const EccRead& r : kTotals) {
      unsigned long long n = 0;
      if (lost_now_) return;
      if (read_ok(f_.nvmlDeviceGetTotalEccErrors(dev_, r.type, r.counter, &n),
                  "nvmlDeviceGetTotalEccErrors", {r.field})) {
        s.*r.out = n;
      }
    }
  }
  if (f_.nvmlDeviceGetMemoryErrorCounter) {
    struct LocationRead {
      nvmlMemoryErrorType_t type;
      nvmlEccCounterType_t counter;
      nvmlMemoryLocation_t location;
      const char* field;
      opt<uint64_t> GpuSample::*out;
    };
    static constexpr LocationRead kByLocation[] = {
        {NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_AGGREGATE_ECC,
         NVML_MEMORY_LOCATION_SRAM, "ecc_sram_correctable_aggregate_total",
         &GpuSample::ecc_sram_correctable_aggregate_total},
        {NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC,
         NVML_MEMORY_LOCATION_SRAM, "ecc_sram_uncorrectable_aggregate_total",
         &GpuSample::ecc_sram_uncorrectable_aggregate_total},
        {NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_AGGREGATE_ECC,
         NVML_MEMORY_LOCATION_DRAM, "ecc_dram_correctable_aggregate_total",
         &GpuSample::ecc_dram_correctable_aggregate_total},
        {NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC,
         NVML_MEMORY_LOCATION_DRAM, "ecc_dram_uncorrectable_aggregate_total",
         &GpuSample::ecc_dram_uncorrectable_aggregate_total},
        {NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC,
         NVML_MEMORY_LOCATION_SRAM, "ecc_sram_correctable_volatile_total",
         &GpuSample::ecc_sram_correctable_volatile_total},
        {NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC,
         NVML_MEMORY_LOCATION_SRAM, "ecc_sram_uncorrectable_volatile_total",
         &GpuSample::ecc_sram_uncorrectable_volatile_total},
        {NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC,
         NVML_MEMORY_LOCATION_DRAM, "ecc_dram_correctable_volatile_total",
         &GpuSample::ecc_dram_correctable_volatile_total},
        {NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC,
         NVML_MEMORY_LOCATION_DRAM, "ecc_dram_uncorrectable_volatile_total",
         &GpuSample::ecc_dram_uncorrectable_volatile_total},
    };
    for (const LocationRead& r : kByLocation) {
      unsigned long long n = 0;
      if (lost_now_) return;
      if (read_ok(f_.nvmlDeviceGetMemoryErrorCounter(dev_, r.type, r.counter,
                                                     r.location, &n),
                  "nvmlDeviceGetMemoryErrorCounter", {r.field})) {
        s.*r.out = n;
      }
    }
  }
  if (f_.nvmlDeviceGetSramEccErrorStatus && !lost_now_) {
    nvmlEccSramErrorStatus_t st{};
    st.version = nvmlEccSramErrorStatus_v1;
    nvmlReturn_t rc = f_.nvmlDeviceGetSramEccErrorStatus(dev_, &st);
    // A library that has the function but not this struct version: unknown.
    if (rc == NVML_ERROR_ARGUMENT_VERSION_MISMATCH)
      rc = NVML_ERROR_FUNCTION_NOT_FOUND;
    if (read_ok(rc, "nvmlDeviceGetSramEccErrorStatus",
                {"ecc_sram_threshold_exceeded"})) {
      s.ecc_sram_threshold_exceeded = st.bThresholdExceeded != 0;
    }
  }
  if (f_.nvmlDeviceGetRetiredPagesPendingStatus && !lost_now_) {
    nvmlEnableState_t pending = NVML_FEATURE_DISABLED;
    if (read_ok(f_.nvmlDeviceGetRetiredPagesPendingStatus(dev_, &pending),
                "nvmlDeviceGetRetiredPagesPendingStatus",
                {"retired_pages_pending"})) {
      s.retired_pages_pending = pending == NVML_FEATURE_ENABLED;
    }
  }
  if (f_.nvmlDeviceGetRemappedRows && !lost_now_) {
    unsigned corr = 0, unc = 0, pending = 0, failure = 0;
    if (read_ok(
            f_.nvmlDeviceGetRemappedRows(dev_, &corr, &unc, &pending, &failure),
            "nvmlDeviceGetRemappedRows",
            {"remapped_rows_pending", "remapped_rows_failure",
             "remapped_rows_correctable_total",
             "remapped_rows_uncorrectable_total"})) {
      s.remapped_rows_pending = pending != 0;
      s.remapped_rows_failure = failure != 0;
      s.remapped_rows_correctable_total = corr;
      s.remapped_rows_uncorrectable_total = unc;
    }
  }
  if (f_.nvmlDeviceGetRowRemapperHistogram && !lost_now_) {
    nvmlRowRemapperHistogramValues_t h{};
    if (read_ok(f_.nvmlDeviceGetRowRemapperHistogram(dev_, &h),
                "nvmlDeviceGetRowRemapperHistogram", {"row_remap_histogram"})) {
      s.row_remap_histogram =
          RowRemapHistogram{h.max, h.high, h.partial, h.low, h.none};
    }
  }
}

}  // namespace gd::nvml
