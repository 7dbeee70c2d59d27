// DeviceReader (device_reader.h): the memory health of a sample.
#include "nvml/device_reader.h"
#include "nvml/nvml_util.h"

namespace gd::nvml {

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
