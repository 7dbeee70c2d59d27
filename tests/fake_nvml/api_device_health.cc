// Memory-health, thermal-margin and BAR1 readings added with the model's
// "additions to version 1": ECC counters by location, the SRAM ECC status,
// the row remapper histogram, the T.Limit margin and BAR1 use. Like every
// sampled reading, an unknown (null/absent) sample field answers
// NVML_ERROR_NOT_SUPPORTED.
#include <cstdint>

#include "state.h"

using fake_nvml::DeviceCall;

namespace {

using Counter = gd::opt<uint64_t> gd::GpuSample::*;

// The sample field behind one (type, counter, location) memory error count;
// nullptr for a location the data model does not keep.
Counter location_counter(nvmlMemoryErrorType_t type,
                         nvmlEccCounterType_t counter,
                         nvmlMemoryLocation_t location) {
  const bool corrected = type == NVML_MEMORY_ERROR_TYPE_CORRECTED;
  const bool aggregate = counter == NVML_AGGREGATE_ECC;
  using S = gd::GpuSample;
  switch (location) {
    case NVML_MEMORY_LOCATION_SRAM:
      if (aggregate)
        return corrected ? &S::ecc_sram_correctable_aggregate_total
                         : &S::ecc_sram_uncorrectable_aggregate_total;
      return corrected ? &S::ecc_sram_correctable_volatile_total
                       : &S::ecc_sram_uncorrectable_volatile_total;
    case NVML_MEMORY_LOCATION_DRAM:
      if (aggregate)
        return corrected ? &S::ecc_dram_correctable_aggregate_total
                         : &S::ecc_dram_uncorrectable_aggregate_total;
      return corrected ? &S::ecc_dram_correctable_volatile_total
                       : &S::ecc_dram_uncorrectable_volatile_total;
    default:
      return nullptr;
  }
}

}  // namespace

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMemoryErrorCounter(
    nvmlDevice_t device, nvmlMemoryErrorType_t errorType,
    nvmlEccCounterType_t counterType, nvmlMemoryLocation_t locationType,
    unsigned long long* count) {
  DeviceCall call("nvmlDeviceGetMemoryErrorCounter", device);
  if (call.status() != NVML_SUCCESS) return call.status();
  if (count == nullptr || errorType >= NVML_MEMORY_ERROR_TYPE_COUNT ||
      counterType >= NVML_ECC_COUNTER_TYPE_COUNT ||
      locationType >= NVML_MEMORY_LOCATION_COUNT) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  Counter field = location_counter(errorType, counterType, locationType);
  if (field == nullptr) return NVML_ERROR_NOT_SUPPORTED;
  const auto& value = call.sample().*field;
  if (!value) return NVML_ERROR_NOT_SUPPORTED;
  *count = *value;
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetRowRemapperHistogram(
    nvmlDevice_t device, nvmlRowRemapperHistogramValues_t* values) {
  DeviceCall call("nvmlDeviceGetRowRemapperHistogram", device);
  if (call.status() != NVML_SUCCESS) return call.status();
  if (values == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const auto& h = call.sample().row_remap_histogram;
  if (!h) return NVML_ERROR_NOT_SUPPORTED;
  values->max = h->max;
  values->high = h->high;
  values->partial = h->partial;
  values->low = h->low;
  values->none = h->none;
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t
nvmlDeviceGetBAR1MemoryInfo(nvmlDevice_t device, nvmlBAR1Memory_t* bar1Memory) {
  DeviceCall call("nvmlDeviceGetBAR1MemoryInfo", device);
  if (call.status() != NVML_SUCCESS) return call.status();
  if (bar1Memory == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const auto& total = call.info().bar1_total_bytes;
  const auto& used = call.sample().bar1_used_bytes;
  // One call answers both, as for nvmlDeviceGetMemoryInfo: a scenario that
  // lacks either gets NOT_SUPPORTED rather than a made-up zero.
  if (!total || !used) return NVML_ERROR_NOT_SUPPORTED;
  bar1Memory->bar1Total = *total;
  bar1Memory->bar1Used = *used;
  bar1Memory->bar1Free = *used < *total ? *total - *used : 0;
  return NVML_SUCCESS;
}

#ifndef FAKE_NVML_OLD_API
FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetSramEccErrorStatus(
    nvmlDevice_t device, nvmlEccSramErrorStatus_t* status) {
  DeviceCall call("nvmlDeviceGetSramEccErrorStatus", device);
  if (call.status() != NVML_SUCCESS) return call.status();
  if (status == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (status->version != nvmlEccSramErrorStatus_v1)
    return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  const auto& s = call.sample();
  if (!s.ecc_sram_threshold_exceeded) return NVML_ERROR_NOT_SUPPORTED;
  const unsigned version = status->version;
  *status = nvmlEccSramErrorStatus_t{};
  status->version = version;
  // The data model keeps SRAM uncorrectable counts without NVML's parity /
  // SEC-DED split: they are all reported as SEC-DED.
  status->aggregateCor = s.ecc_sram_correctable_aggregate_total.value_or(0);
  status->aggregateUncSecDed =
      s.ecc_sram_uncorrectable_aggregate_total.value_or(0);
  status->volatileCor = s.ecc_sram_correctable_volatile_total.value_or(0);
  status->volatileUncSecDed =
      s.ecc_sram_uncorrectable_volatile_total.value_or(0);
  status->aggregateUncBucketOther = status->aggregateUncSecDed;
  status->bThresholdExceeded = *s.ecc_sram_threshold_exceeded ? 1 : 0;
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMarginTemperature(
    nvmlDevice_t device, nvmlMarginTemperature_t* marginTempInfo) {
  DeviceCall call("nvmlDeviceGetMarginTemperature", device);
  if (call.status() != NVML_SUCCESS) return call.status();
  if (marginTempInfo == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (marginTempInfo->version != nvmlMarginTemperature_v1)
    return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  const auto& margin = call.sample().temp_limit_margin_c;
  if (!margin) return NVML_ERROR_NOT_SUPPORTED;
  marginTempInfo->marginTemperature = *margin;
  return NVML_SUCCESS;
}
#endif
