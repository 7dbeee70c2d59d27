// Device readings that come from the scenario sample in effect at the time of
// the call. A null/absent sample field answers NVML_ERROR_NOT_SUPPORTED.
#include <cmath>
#include <string>
#include <string_view>
#include <utility>

#include "nvlink_fields.h"
#include "state.h"

using fake_nvml::DeviceCall;

namespace {

template <typename T>
using Field = gd::opt<T> gd::GpuSample::*;

// Answers an optional sample field through `out`, converted by `conv`.
template <typename T, typename Out, typename Conv>
nvmlReturn_t reading(const char* function, nvmlDevice_t device, Out* out,
                     Field<T> field, Conv conv) {
  DeviceCall call(function, device);
  if (call.status() != NVML_SUCCESS) return call.status();
  if (out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const gd::opt<T>& value = call.sample().*field;
  if (!value) return NVML_ERROR_NOT_SUPPORTED;
  *out = conv(*value);
  return NVML_SUCCESS;
}

unsigned rounded(double v) { return static_cast<unsigned>(std::lround(v)); }
unsigned sampled_as_uint(int v) { return static_cast<unsigned>(v); }
unsigned long long as_ull(uint64_t v) { return v; }
unsigned sampled_milliwatts(double w) {
  return static_cast<unsigned>(std::lround(w * 1000.0));
}
// NVML reports PCIe throughput in KB/s (1 KB = 1024 bytes).
unsigned kilobytes(uint64_t bytes) {
  return static_cast<unsigned>(bytes / 1024);
}
nvmlEnableState_t enable_state(bool on) {
  return on ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
}

// trace-format clock_event_reasons vocabulary -> NVML reason bits.
unsigned long long reason_bits(const std::vector<std::string>& names) {
  struct Reason {
    std::string_view name;
    unsigned long long bit;
  };
  static constexpr Reason kReasons[] = {
      {"gpu_idle", nvmlClocksThrottleReasonGpuIdle},
      {"applications_clocks_setting",
       nvmlClocksThrottleReasonApplicationsClocksSetting},
      {"sw_power_cap", nvmlClocksThrottleReasonSwPowerCap},
      {"hw_slowdown", nvmlClocksThrottleReasonHwSlowdown},
      {"sync_boost", nvmlClocksThrottleReasonSyncBoost},
      {"sw_thermal_slowdown", nvmlClocksThrottleReasonSwThermalSlowdown},
      {"hw_thermal_slowdown", nvmlClocksThrottleReasonHwThermalSlowdown},
      {"hw_power_brake_slowdown", nvmlClocksThrottleReasonHwPowerBrakeSlowdown},
      {"display_clock_setting", nvmlClocksThrottleReasonDisplayClockSetting},
  };
  unsigned long long bits = 0;
  for (const auto& n : names) {
    for (const auto& r : kReasons) {
      if (r.name == n) bits |= r.bit;
    }
  }
  return bits;
}

// Every reason bit above: what a datacenter GPU reports as supported.
constexpr unsigned long long kAllReasonBits = 0x1FF;

nvmlReturn_t current_reasons(const char* function, nvmlDevice_t device,
                             unsigned long long* reasons) {
  return reading(function, device, reasons, &gd::GpuSample::clock_event_reasons,
                 reason_bits);
}

nvmlReturn_t supported_reasons(const char* function, nvmlDevice_t device,
                               unsigned long long* reasons) {
  return reading(function, device, reasons, &gd::GpuSample::clock_event_reasons,
                 [](const auto&) { return kAllReasonBits; });
}

// trace-format recovery_action -> NVML_GPU_RECOVERY_ACTION_*; "" (unknown)
// and words this build does not know -> nullopt (NOT_SUPPORTED).
gd::opt<unsigned> recovery_action_value(const std::string& action) {
  static constexpr struct {
    std::string_view name;
    unsigned value;
  } kActions[] = {
      {gd::kRecoveryNone, NVML_GPU_RECOVERY_ACTION_NONE},
      {gd::kRecoveryGpuReset, NVML_GPU_RECOVERY_ACTION_GPU_RESET},
      {gd::kRecoveryNodeReboot, NVML_GPU_RECOVERY_ACTION_NODE_REBOOT},
      {gd::kRecoveryDrainP2p, NVML_GPU_RECOVERY_ACTION_DRAIN_P2P},
      {gd::kRecoveryDrainAndReset, NVML_GPU_RECOVERY_ACTION_DRAIN_AND_RESET},
  };
  for (const auto& a : kActions) {
    if (a.name == action) return a.value;
  }
  return std::nullopt;
}

// One field of nvmlDeviceGetFieldValues, answered from the sample.
[[maybe_unused]] void field_value(const gd::GpuSample& s, nvmlFieldValue_t& v) {
  auto set_uint = [&](const auto& opt_value, auto conv) {
    if (!opt_value) {
      v.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
      return;
    }
    v.valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
    v.value.uiVal = conv(*opt_value);
    v.nvmlReturn = NVML_SUCCESS;
  };
  auto set_ull = [&](const gd::opt<uint64_t>& opt_value) {
    if (!opt_value) {
      v.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
      return;
    }
    v.valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
    v.value.ullVal = *opt_value;
    v.nvmlReturn = NVML_SUCCESS;
  };
  auto flag = [](bool b) { return b ? 1u : 0u; };
  switch (v.fieldId) {
    case NVML_FI_DEV_MEMORY_TEMP:
      set_uint(s.mem_temp_c, sampled_as_uint);
      break;
    case FAKE_NVML_FI_DEV_ECC_SBE_VOL_TOTAL:
      set_ull(s.ecc_sbe_volatile_total);
      break;
    case FAKE_NVML_FI_DEV_ECC_DBE_VOL_TOTAL:
      set_ull(s.ecc_dbe_volatile_total);
      break;
    case FAKE_NVML_FI_DEV_RETIRED_PENDING:
      set_uint(s.retired_pages_pending, flag);
      break;
    case FAKE_NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION:
      set_ull(s.energy_mj_total);
      break;
    case FAKE_NVML_FI_DEV_PCIE_REPLAY_COUNTER:
      set_ull(s.pcie_replay_total);
      break;
    case FAKE_NVML_FI_DEV_REMAPPED_PENDING:
      set_uint(s.remapped_rows_pending, flag);
      break;
    case FAKE_NVML_FI_DEV_REMAPPED_FAILURE:
      set_uint(s.remapped_rows_failure, flag);
      break;
    case FAKE_NVML_FI_DEV_ECC_SBE_AGG_TOTAL:
      set_ull(s.ecc_sbe_aggregate_total);
      break;
    case FAKE_NVML_FI_DEV_ECC_DBE_AGG_TOTAL:
      set_ull(s.ecc_dbe_aggregate_total);
      break;
    case FAKE_NVML_FI_DEV_REMAPPED_COR:
      set_uint(s.remapped_rows_correctable_total,
               [](uint64_t n) { return static_cast<unsigned>(n); });
      break;
    case FAKE_NVML_FI_DEV_REMAPPED_UNC:
      set_uint(s.remapped_rows_uncorrectable_total,
               [](uint64_t n) { return static_cast<unsigned>(n); });
      break;
    case NVML_FI_DEV_GET_GPU_RECOVERY_ACTION:
      set_uint(recovery_action_value(s.recovery_action),
               [](unsigned a) { return a; });
      break;
    default:
      v.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
      break;
  }
}

// Total and used memory of a GPU, or of a MIG device (its instance).
std::pair<gd::opt<uint64_t>, gd::opt<uint64_t>> memory_of(
    const DeviceCall& call) {
  if (call.is_mig())
    return {call.mig().mem_total_bytes, call.mig().mem_used_bytes};
  return {call.info().memory_total_bytes, call.sample().mem_used_bytes};
}

}  // namespace

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device,
                                                      nvmlMemory_t* memory) {
  DeviceCall call("nvmlDeviceGetMemoryInfo", device, DeviceCall::Mig::kAccept);
  if (call.status() != NVML_SUCCESS) return call.status();
  if (memory == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const auto [total, used] = memory_of(call);
  if (!total || !used) return NVML_ERROR_NOT_SUPPORTED;
  memory->total = *total;
  memory->used = *used;
  memory->free = *used < *total ? *total - *used : 0;
  return NVML_SUCCESS;
}

#ifndef FAKE_NVML_OLD_API
FAKE_NVML_EXPORT nvmlReturn_t
nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t* memory) {
  DeviceCall call("nvmlDeviceGetMemoryInfo_v2", device,
                  DeviceCall::Mig::kAccept);
  if (call.status() != NVML_SUCCESS) return call.status();
  if (memory == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (memory->version != nvmlMemory_v2)
    return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  const auto [total, used] = memory_of(call);
  if (!total || !used) return NVML_ERROR_NOT_SUPPORTED;
  memory->total = *total;
  // _v2 keeps reserved memory apart: total = reserved + used + free. A MIG
  // instance's reserve is part of the GPU's.
  const uint64_t reserved =
      call.is_mig() ? 0 : call.sample().mem_reserved_bytes.value_or(0);
  memory->reserved = reserved;
  memory->used = *used;
  memory->free = *used + reserved < *total ? *total - *used - reserved : 0;
  return NVML_SUCCESS;
}
#endif

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(
    nvmlDevice_t device, nvmlUtilization_t* utilization) {
  DeviceCall call("nvmlDeviceGetUtilizationRates", device);
  if (call.status() != NVML_SUCCESS) return call.status();
  if (utilization == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const auto& s = call.sample();
  if (!s.util_pct || !s.mem_util_pct) return NVML_ERROR_NOT_SUPPORTED;
  utilization->gpu = rounded(*s.util_pct);
  utilization->memory = rounded(*s.mem_util_pct);
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetTemperature(
    nvmlDevice_t device, nvmlTemperatureSensors_t sensorType,
    unsigned int* temp) {
  if (sensorType != NVML_TEMPERATURE_GPU) {
    DeviceCall call("nvmlDeviceGetTemperature", device);
    return call.status() != NVML_SUCCESS ? call.status()
                                         : NVML_ERROR_INVALID_ARGUMENT;
  }
  return reading("nvmlDeviceGetTemperature", device, temp,
                 &gd::GpuSample::temp_c, sampled_as_uint);
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device,
                                                      unsigned int* power) {
  return reading("nvmlDeviceGetPowerUsage", device, power,
                 &gd::GpuSample::power_w, sampled_milliwatts);
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(
    nvmlDevice_t device, unsigned long long* energy) {
  return reading("nvmlDeviceGetTotalEnergyConsumption", device, energy,
                 &gd::GpuSample::energy_mj_total, as_ull);
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t device,
                                                    unsigned int* speed) {
  return reading("nvmlDeviceGetFanSpeed", device, speed,
                 &gd::GpuSample::fan_pct, rounded);
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetFanSpeed_v2(nvmlDevice_t device,
                                                       unsigned int fan,
                                                       unsigned int* speed) {
  if (fan != 0) {  // the data model has one fan figure: fan 0
    DeviceCall call("nvmlDeviceGetFanSpeed_v2", device);
    return call.status() != NVML_SUCCESS ? call.status()
                                         : NVML_ERROR_INVALID_ARGUMENT;
  }
  return reading("nvmlDeviceGetFanSpeed_v2", device, speed,
                 &gd::GpuSample::fan_pct, rounded);
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetNumFans(nvmlDevice_t device,
                                                   unsigned int* numFans) {
  return reading("nvmlDeviceGetNumFans", device, numFans,
                 &gd::GpuSample::fan_pct, [](double) { return 1u; });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device,
                                                     nvmlClockType_t type,
                                                     unsigned int* clock) {
  const char* fn = "nvmlDeviceGetClockInfo";
  switch (type) {
    case NVML_CLOCK_GRAPHICS:  // graphics and SM run at one clock on these GPUs
    case NVML_CLOCK_SM:
      return reading(fn, device, clock, &gd::GpuSample::sm_clock_mhz,
                     sampled_as_uint);
    case NVML_CLOCK_MEM:
      return reading(fn, device, clock, &gd::GpuSample::mem_clock_mhz,
                     sampled_as_uint);
    default: {
      DeviceCall call(fn, device);
      if (call.status() != NVML_SUCCESS) return call.status();
      if (clock == nullptr || static_cast<unsigned>(type) >= NVML_CLOCK_COUNT) {
        return NVML_ERROR_INVALID_ARGUMENT;
      }
      return NVML_ERROR_NOT_SUPPORTED;
    }
  }
}

FAKE_NVML_EXPORT nvmlReturn_t
nvmlDeviceGetPerformanceState(nvmlDevice_t device, nvmlPstates_t* pState) {
  return reading("nvmlDeviceGetPerformanceState", device, pState,
                 &gd::GpuSample::pstate,
                 [](int p) { return static_cast<nvmlPstates_t>(p); });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPowerState(nvmlDevice_t device,
                                                      nvmlPstates_t* pState) {
  return reading("nvmlDeviceGetPowerState", device, pState,
                 &gd::GpuSample::pstate,
                 [](int p) { return static_cast<nvmlPstates_t>(p); });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(
    nvmlDevice_t device, unsigned long long* clocksThrottleReasons) {
  return current_reasons("nvmlDeviceGetCurrentClocksThrottleReasons", device,
                         clocksThrottleReasons);
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetSupportedClocksThrottleReasons(
    nvmlDevice_t device, unsigned long long* reasons) {
  return supported_reasons("nvmlDeviceGetSupportedClocksThrottleReasons",
                           device, reasons);
}

#ifndef FAKE_NVML_OLD_API
FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(
    nvmlDevice_t device, unsigned long long* clocksEventReasons) {
  return current_reasons("nvmlDeviceGetCurrentClocksEventReasons", device,
                         clocksEventReasons);
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetSupportedClocksEventReasons(
    nvmlDevice_t device, unsigned long long* reasons) {
  return supported_reasons("nvmlDeviceGetSupportedClocksEventReasons", device,
                           reasons);
}
#endif

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(
    nvmlDevice_t device, unsigned int* currLinkGen) {
  return reading("nvmlDeviceGetCurrPcieLinkGeneration", device, currLinkGen,
                 &gd::GpuSample::pcie_gen, sampled_as_uint);
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(
    nvmlDevice_t device, unsigned int* currLinkWidth) {
  return reading("nvmlDeviceGetCurrPcieLinkWidth", device, currLinkWidth,
                 &gd::GpuSample::pcie_width, sampled_as_uint);
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPcieThroughput(
    nvmlDevice_t device, nvmlPcieUtilCounter_t counter, unsigned int* value) {
  const char* fn = "nvmlDeviceGetPcieThroughput";
  switch (counter) {
    case NVML_PCIE_UTIL_TX_BYTES:
      return reading(fn, device, value, &gd::GpuSample::pcie_tx_bytes_per_s,
                     kilobytes);
    case NVML_PCIE_UTIL_RX_BYTES:
      return reading(fn, device, value, &gd::GpuSample::pcie_rx_bytes_per_s,
                     kilobytes);
    default: {
      DeviceCall call(fn, device);
      return call.status() != NVML_SUCCESS ? call.status()
                                           : NVML_ERROR_INVALID_ARGUMENT;
    }
  }
}

FAKE_NVML_EXPORT nvmlReturn_t
nvmlDeviceGetPcieReplayCounter(nvmlDevice_t device, unsigned int* value) {
  return reading("nvmlDeviceGetPcieReplayCounter", device, value,
                 &gd::GpuSample::pcie_replay_total,
                 [](uint64_t v) { return static_cast<unsigned>(v); });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetTotalEccErrors(
    nvmlDevice_t device, nvmlMemoryErrorType_t errorType,
    nvmlEccCounterType_t counterType, unsigned long long* eccCounts) {
  const char* fn = "nvmlDeviceGetTotalEccErrors";
  if (errorType >= NVML_MEMORY_ERROR_TYPE_COUNT ||
      counterType >= NVML_ECC_COUNTER_TYPE_COUNT) {
    DeviceCall call(fn, device);
    return call.status() != NVML_SUCCESS ? call.status()
                                         : NVML_ERROR_INVALID_ARGUMENT;
  }
  const bool corrected = errorType == NVML_MEMORY_ERROR_TYPE_CORRECTED;
  if (counterType == NVML_AGGREGATE_ECC) {
    return reading(fn, device, eccCounts,
                   corrected ? &gd::GpuSample::ecc_sbe_aggregate_total
                             : &gd::GpuSample::ecc_dbe_aggregate_total,
                   as_ull);
  }
  return reading(fn, device, eccCounts,
                 corrected ? &gd::GpuSample::ecc_sbe_volatile_total
                           : &gd::GpuSample::ecc_dbe_volatile_total,
                 as_ull);
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(
    nvmlDevice_t device, nvmlEnableState_t* isPending) {
  return reading("nvmlDeviceGetRetiredPagesPendingStatus", device, isPending,
                 &gd::GpuSample::retired_pages_pending, enable_state);
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetRemappedRows(
    nvmlDevice_t device, unsigned int* corrRows, unsigned int* uncRows,
    unsigned int* isPending, unsigned int* failureOccurred) {
  DeviceCall call("nvmlDeviceGetRemappedRows", device);
  if (call.status() != NVML_SUCCESS) return call.status();
  if (!corrRows || !uncRows || !isPending || !failureOccurred)
    return NVML_ERROR_INVALID_ARGUMENT;
  const auto& s = call.sample();
  if (!s.remapped_rows_pending && !s.remapped_rows_failure &&
      !s.remapped_rows_correctable_total &&
      !s.remapped_rows_uncorrectable_total) {
    return NVML_ERROR_NOT_SUPPORTED;
  }
  // A scenario without the row counts (written before they existed): none.
  *corrRows =
      static_cast<unsigned>(s.remapped_rows_correctable_total.value_or(0));
  *uncRows =
      static_cast<unsigned>(s.remapped_rows_uncorrectable_total.value_or(0));
  *isPending = s.remapped_rows_pending.value_or(false) ? 1 : 0;
  *failureOccurred = s.remapped_rows_failure.value_or(false) ? 1 : 0;
  return NVML_SUCCESS;
}

#ifndef FAKE_NVML_OLD_API
FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetFieldValues(
    nvmlDevice_t device, int valuesCount, nvmlFieldValue_t* values) {
  DeviceCall call("nvmlDeviceGetFieldValues", device);
  if (call.status() != NVML_SUCCESS) return call.status();
  if (valuesCount <= 0 || values == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  // One instant for every value and its timestamp: a reader that divides a
  // counter's change by its timestamps' gets the scenario's rate exactly,
  // however late it was scheduled between the two.
  const double now_s = call.world().now_s();
  const long long now_us = call.world().wall_us_at(now_s);
  for (int i = 0; i < valuesCount; ++i) {
    values[i].timestamp = now_us;
    values[i].latencyUsec = 0;
    if (!fake_nvml::nvlink_field_value(call, values[i], now_s))
      field_value(call.sample(), values[i]);
  }
  return NVML_SUCCESS;
}
#endif
