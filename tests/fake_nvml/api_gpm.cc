// GPM (Hopper and newer): sample buffers that remember when they were taken
// (scenario time) and of what (the GPU, or one GPU instance), and metrics
// that average the scenario's GPM values over the time between two samples,
// as the real counters do. A GPU older than Hopper is not supported.
#include <cmath>
#include <iterator>

#include "state.h"

// The opaque type behind nvmlGpmSample_t.
struct nvmlGpmSample_st {
  unsigned magic;
  bool taken = false;
  unsigned slot = 0;
  long gi = -1;  // -1: the whole GPU
  double t_s = 0;
};

#ifndef FAKE_NVML_OLD_API  // GPM is newer than the old variant's API

using fake_nvml::DeviceCall;

namespace {

constexpr unsigned kMagic = 0x47504D31;  // "GPM1"

struct MetricName {
  unsigned id;
  gd::opt<double> gd::GpmActivity::*field;
  const char* short_name;
  const char* long_name;
};

// The metrics the data model carries, with NVML's unit for each (percent).
constexpr MetricName kMetrics[] = {
    {NVML_GPM_METRIC_GRAPHICS_UTIL, &gd::GpmActivity::gr_engine_active_pct,
     "gr_util", "graphics engine utilization"},
    {NVML_GPM_METRIC_SM_UTIL, &gd::GpmActivity::sm_active_pct, "sm_util",
     "SM utilization"},
    {NVML_GPM_METRIC_SM_OCCUPANCY, &gd::GpmActivity::sm_occupancy_pct,
     "sm_occupancy", "SM occupancy"},
    {NVML_GPM_METRIC_ANY_TENSOR_UTIL, &gd::GpmActivity::tensor_active_pct,
     "any_tensor_util", "any tensor pipe utilization"},
    {NVML_GPM_METRIC_DRAM_BW_UTIL, &gd::GpmActivity::dram_active_pct,
     "dram_bw_util", "DRAM bandwidth utilization"},
    {NVML_GPM_METRIC_FP64_UTIL, &gd::GpmActivity::fp64_active_pct, "fp64_util",
     "FP64 pipe utilization"},
    {NVML_GPM_METRIC_FP32_UTIL, &gd::GpmActivity::fp32_active_pct, "fp32_util",
     "FP32 pipe utilization"},
    {NVML_GPM_METRIC_FP16_UTIL, &gd::GpmActivity::fp16_active_pct, "fp16_util",
     "FP16 pipe utilization"},
};
char kUnit[] = "%";

bool gpm_capable(const gd::GpuInfo& g) {
  return g.architecture == "hopper" || g.architecture == "blackwell";
}

bool valid(const nvmlGpmSample_t s) {
  return s != nullptr && s->magic == kMagic;
}

nvmlReturn_t take(const char* function, nvmlDevice_t device, long gi,
                  nvmlGpmSample_t sample) {
  DeviceCall call(function, device);
  if (call.status() != NVML_SUCCESS) return call.status();
  if (!valid(sample)) return NVML_ERROR_INVALID_ARGUMENT;
  if (!gpm_capable(call.info())) return NVML_ERROR_NOT_SUPPORTED;
  if (gi >= 0) {
    bool found = false;
    for (const auto& m : call.mig_instances())
      found |= m.gi_id == static_cast<unsigned long>(gi);
    if (!call.info().mig_enabled.value_or(false))
      return NVML_ERROR_NOT_SUPPORTED;
    if (!found) return NVML_ERROR_NOT_FOUND;
  }
  sample->taken = true;
  sample->slot = call.slot();
  sample->gi = gi;
  sample->t_s = call.world().now_s();
  return NVML_SUCCESS;
}

}  // namespace

FAKE_NVML_EXPORT nvmlReturn_t
nvmlGpmQueryDeviceSupport(nvmlDevice_t device, nvmlGpmSupport_t* gpmSupport) {
  DeviceCall call("nvmlGpmQueryDeviceSupport", device);
  if (call.status() != NVML_SUCCESS) return call.status();
  if (gpmSupport == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (gpmSupport->version != NVML_GPM_SUPPORT_VERSION)
    return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  gpmSupport->isSupportedDevice = gpm_capable(call.info()) ? 1 : 0;
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t* gpmSample) {
  if (!fake_nvml::current_world()) return NVML_ERROR_UNINITIALIZED;
  if (gpmSample == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  auto* s = new (std::nothrow) nvmlGpmSample_st{};
  if (s == nullptr) return NVML_ERROR_MEMORY;
  s->magic = kMagic;
  *gpmSample = s;
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t gpmSample) {
  if (!valid(gpmSample)) return NVML_ERROR_INVALID_ARGUMENT;
  gpmSample->magic = 0;  // a second free is caught, not a double delete
  delete gpmSample;
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t device,
                                               nvmlGpmSample_t gpmSample) {
  return take("nvmlGpmSampleGet", device, -1, gpmSample);
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlGpmMigSampleGet(nvmlDevice_t device,
                                                  unsigned int gpuInstanceId,
                                                  nvmlGpmSample_t gpmSample) {
  return take("nvmlGpmMigSampleGet", device, static_cast<long>(gpuInstanceId),
              gpmSample);
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t* m) {
  auto world = fake_nvml::current_world();
  if (!world) return NVML_ERROR_UNINITIALIZED;
  if (m == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (m->version != NVML_GPM_METRICS_GET_VERSION)
    return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  if (m->numMetrics > NVML_GPM_METRIC_MAX || !valid(m->sample1) ||
      !valid(m->sample2) || !m->sample1->taken || !m->sample2->taken ||
      m->sample1->slot != m->sample2->slot ||
      m->sample1->gi != m->sample2->gi ||
      !(m->sample2->t_s > m->sample1->t_s)) {
    return NVML_ERROR_INVALID_ARGUMENT;  // not two samples of one thing
  }
  DeviceCall call("nvmlGpmMetricsGet",
                  fake_nvml::handle_for_slot(m->sample1->slot));
  if (call.status() != NVML_SUCCESS) return call.status();
  const int gpu = call.info().index;
  const long gi = m->sample1->gi;
  for (unsigned i = 0; i < m->numMetrics; ++i) {
    nvmlGpmMetric_t& metric = m->metrics[i];
    const MetricName* known = nullptr;
    for (const auto& k : kMetrics)
      if (k.id == metric.metricId) known = &k;
    metric.value = 0;
    if (known == nullptr) {
      metric.nvmlReturn = metric.metricId < NVML_GPM_METRIC_MAX
                              ? NVML_ERROR_NOT_SUPPORTED
                              : NVML_ERROR_INVALID_ARGUMENT;
      continue;
    }
    metric.metricInfo.shortName = const_cast<char*>(known->short_name);
    metric.metricInfo.longName = const_cast<char*>(known->long_name);
    metric.metricInfo.unit = kUnit;
    auto field = known->field;
    auto avg = fake_nvml::scenario_average(
        *world, gpu, m->sample1->t_s, m->sample2->t_s,
        [field, gi](const gd::GpuSample& g) -> std::optional<double> {
          if (gi < 0) return g.gpm.*field;
          if (!g.mig_instances) return std::nullopt;
          for (const auto& inst : *g.mig_instances)
            if (inst.gi_id == static_cast<unsigned long>(gi))
              return inst.gpm.*field;
          return std::nullopt;
        });
    if (!avg) {
      metric.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
      continue;
    }
    metric.value = *avg;
    metric.nvmlReturn = NVML_SUCCESS;
  }
  return NVML_SUCCESS;
}
#endif
