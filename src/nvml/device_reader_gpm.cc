// GPM (GPU Performance Monitoring, Hopper and newer): what the SMs, tensor
// cores and memory really did. NVML computes each metric from two samples of
// the GPU's counters; each read takes one sample and measures the interval
// since the previous read's, so every sample's activity covers exactly the
// sampling interval (the first is taken with the static facts). Everything
// runs on the GPU's own worker thread, under its deadline.
#include <cstring>
#include <iterator>

#include "nvml/device_reader.h"
#include "nvml/nvml_util.h"

namespace gd::nvml {
namespace {

struct GpmMetricField {
  unsigned id;
  opt<double> GpmActivity::*field;
};

constexpr GpmMetricField kGpmMetrics[] = {
    {NVML_GPM_METRIC_SM_UTIL, &GpmActivity::sm_active_pct},
    {NVML_GPM_METRIC_SM_OCCUPANCY, &GpmActivity::sm_occupancy_pct},
    {NVML_GPM_METRIC_ANY_TENSOR_UTIL, &GpmActivity::tensor_active_pct},
    {NVML_GPM_METRIC_DRAM_BW_UTIL, &GpmActivity::dram_active_pct},
    {NVML_GPM_METRIC_FP64_UTIL, &GpmActivity::fp64_active_pct},
    {NVML_GPM_METRIC_FP32_UTIL, &GpmActivity::fp32_active_pct},
    {NVML_GPM_METRIC_FP16_UTIL, &GpmActivity::fp16_active_pct},
    {NVML_GPM_METRIC_GRAPHICS_UTIL, &GpmActivity::gr_engine_active_pct},
};

// GPM metrics are percentages; anything else is a broken reading.
std::optional<double> percent(double v) {
  if (!(v >= 0)) return std::nullopt;  // also NaN
  return v > 100 ? 100.0 : v;
}

}  // namespace

void DeviceReader::read_gpm_info(const GpuInfo&) {
  nvmlGpmSupport_t support{};
  support.version = NVML_GPM_SUPPORT_VERSION;
  nvmlReturn_t rc = call_if(f_.nvmlGpmQueryDeviceSupport, dev_, &support);
  gpm_supported_ = rc == NVML_SUCCESS && support.isSupportedDevice != 0 &&
                   f_.nvmlGpmSampleAlloc && f_.nvmlGpmSampleGet &&
                   f_.nvmlGpmMetricsGet && f_.nvmlGpmSampleFree;
  if (!gpm_supported_) return;
  // The first sample: the first read_sample() measures from here.
  GpmActivity ignored;
  read_gpm(gpm_gpu_, nullptr, ignored, false);
}

void DeviceReader::free_gpm(GpmPair& pair) {
  if (f_.nvmlGpmSampleFree) {
    if (pair.prev) f_.nvmlGpmSampleFree(pair.prev);
    if (pair.cur) f_.nvmlGpmSampleFree(pair.cur);
  }
  pair = GpmPair{};
}

void DeviceReader::read_gpm(GpmPair& pair, const unsigned* gi, GpmActivity& out,
                            bool report_errors) {
  auto check = [&](nvmlReturn_t rc, std::string_view fn) {
    if (!report_errors) return ok(rc, fn);
    return read_ok(rc, fn,
                   {"sm_active_pct", "sm_occupancy_pct", "tensor_active_pct",
                    "dram_active_pct", "fp64_active_pct", "fp32_active_pct",
                    "fp16_active_pct", "gr_engine_active_pct"});
  };
  if (!slow_now_ && pair.prev_valid) {
    out = pair.last;
    return;
  }
  pair.last = {};
  if (!pair.cur &&
      !check(f_.nvmlGpmSampleAlloc(&pair.cur), "nvmlGpmSampleAlloc")) {
    return;
  }
  if (!pair.prev &&
      !check(f_.nvmlGpmSampleAlloc(&pair.prev), "nvmlGpmSampleAlloc")) {
    return;
  }
  nvmlReturn_t rc;
  if (gi) {
    rc = call_if(f_.nvmlGpmMigSampleGet, dev_, *gi, pair.cur);
    if (rc == NVML_ERROR_FUNCTION_NOT_FOUND || rc == NVML_ERROR_NOT_SUPPORTED) {
      gpm_mig_supported_ = false;  // the GPU as a whole still has GPM
      return;
    }
  } else {
    rc = f_.nvmlGpmSampleGet(dev_, pair.cur);
  }
  if (!check(rc, gi ? "nvmlGpmMigSampleGet" : "nvmlGpmSampleGet")) {
    pair.prev_valid = false;  // measure again from the next good sample
    return;
  }
  if (pair.prev_valid) {
    nvmlGpmMetricsGet_t& req = gpm_request_;
    std::memset(&req, 0, sizeof req);
    req.version = NVML_GPM_METRICS_GET_VERSION;
    req.numMetrics = std::size(kGpmMetrics);
    req.sample1 = pair.prev;
    req.sample2 = pair.cur;
    for (size_t i = 0; i < std::size(kGpmMetrics); ++i)
      req.metrics[i].metricId = kGpmMetrics[i].id;
    if (check(f_.nvmlGpmMetricsGet(&req), "nvmlGpmMetricsGet")) {
      for (size_t i = 0; i < std::size(kGpmMetrics); ++i) {
        const nvmlGpmMetric_t& m = req.metrics[i];
        if (m.nvmlReturn == NVML_SUCCESS)
          out.*kGpmMetrics[i].field = percent(m.value);
      }
    }
    pair.last = out;
  }
  std::swap(pair.prev, pair.cur);
  pair.prev_valid = true;
}

}  // namespace gd::nvml
