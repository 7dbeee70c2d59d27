// What real A100/H100s answer beyond gpudoctor's own reads, so that any
// NVML client (nvidia-smi style tools, DCGM-like agents, pynvml scripts)
// sees a complete datacenter GPU: per-process and video-engine utilisation,
// supported clocks, application/boost clocks, display state, process names,
// and the unit / excluded-device enumerations (none on these systems).
#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "state.h"

using fake_nvml::DeviceCall;
using fake_nvml::SystemCall;

namespace {

// Graphics clocks a datacenter GPU offers: every 15 MHz from 210 MHz up to
// its maximum (an A100's 1410 MHz gives 81 of them), highest first.
constexpr unsigned kMinGraphicsClockMhz = 210;
constexpr unsigned kGraphicsClockStepMhz = 15;
// The window NVML averages video-engine utilisation over.
constexpr unsigned kEngineSamplingPeriodUs = 1000000;

unsigned rounded_pct(double v) {
  return static_cast<unsigned>(std::lround(std::clamp(v, 0.0, 100.0)));
}

// NVML's two-call protocol for a list: a missing or too-small buffer gets
// INSUFFICIENT_SIZE and the count needed.
template <typename T>
nvmlReturn_t answer_list(const std::vector<T>& items, unsigned* count, T* out) {
  if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (out == nullptr || *count < items.size()) {
    *count = static_cast<unsigned>(items.size());
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  std::copy(items.begin(), items.end(), out);
  *count = static_cast<unsigned>(items.size());
  return NVML_SUCCESS;
}

nvmlReturn_t engine_utilization(const char* function, nvmlDevice_t device,
                                unsigned* utilization, unsigned* period,
                                gd::opt<double> gd::GpuSample::*field) {
  DeviceCall call(function, device);
  if (call.status() != NVML_SUCCESS) return call.status();
  if (utilization == nullptr || period == nullptr)
    return NVML_ERROR_INVALID_ARGUMENT;
  const auto& v = call.sample().*field;
  if (!v) return NVML_ERROR_NOT_SUPPORTED;
  *utilization = rounded_pct(*v);
  *period = kEngineSamplingPeriodUs;
  return NVML_SUCCESS;
}

}  // namespace

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetProcessUtilization(
    nvmlDevice_t device, nvmlProcessUtilizationSample_t* utilization,
    unsigned int* processSamplesCount, unsigned long long lastSeenTimeStamp) {
  DeviceCall call("nvmlDeviceGetProcessUtilization", device);
  if (call.status() != NVML_SUCCESS) return call.status();
  if (processSamplesCount == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  // Per-process samples are not kept for MIG-enabled GPUs.
  if (call.info().mig_enabled.value_or(false)) return NVML_ERROR_NOT_SUPPORTED;
  const auto& procs = call.sample().processes;
  if (!procs) return NVML_ERROR_NOT_SUPPORTED;
  // The driver samples each busy process a few times a second: the newest
  // sample is "now", newer than anything a caller has seen before.
  const auto now = static_cast<unsigned long long>(fake_nvml::now_us());
  std::vector<nvmlProcessUtilizationSample_t> samples;
  if (now > lastSeenTimeStamp) {
    for (const auto& p : *procs) {
      if (!p.sm_util_pct && !p.mem_util_pct) continue;
      nvmlProcessUtilizationSample_t u{};
      u.pid = p.pid;
      u.timeStamp = now;
      u.smUtil = rounded_pct(p.sm_util_pct.value_or(0));
      u.memUtil = rounded_pct(p.mem_util_pct.value_or(0));
      samples.push_back(u);
    }
  }
  if (samples.empty()) return NVML_ERROR_NOT_FOUND;  // nothing ran since
  return answer_list(samples, processSamplesCount, utilization);
}

FAKE_NVML_EXPORT nvmlReturn_t
nvmlDeviceGetEncoderUtilization(nvmlDevice_t device, unsigned int* utilization,
                                unsigned int* samplingPeriodUs) {
  return engine_utilization("nvmlDeviceGetEncoderUtilization", device,
                            utilization, samplingPeriodUs,
                            &gd::GpuSample::enc_util_pct);
}

FAKE_NVML_EXPORT nvmlReturn_t
nvmlDeviceGetDecoderUtilization(nvmlDevice_t device, unsigned int* utilization,
                                unsigned int* samplingPeriodUs) {
  return engine_utilization("nvmlDeviceGetDecoderUtilization", device,
                            utilization, samplingPeriodUs,
                            &gd::GpuSample::dec_util_pct);
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetSupportedMemoryClocks(
    nvmlDevice_t device, unsigned int* count, unsigned int* clocksMHz) {
  DeviceCall call("nvmlDeviceGetSupportedMemoryClocks", device);
  if (call.status() != NVML_SUCCESS) return call.status();
  const auto& mem = call.info().mem_clock_max_mhz;
  if (!mem) return NVML_ERROR_NOT_SUPPORTED;
  // HBM runs at one clock.
  return answer_list(std::vector<unsigned>{static_cast<unsigned>(*mem)}, count,
                     clocksMHz);
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetSupportedGraphicsClocks(
    nvmlDevice_t device, unsigned int memoryClockMHz, unsigned int* count,
    unsigned int* clocksMHz) {
  DeviceCall call("nvmlDeviceGetSupportedGraphicsClocks", device);
  if (call.status() != NVML_SUCCESS) return call.status();
  const auto& mem = call.info().mem_clock_max_mhz;
  const auto& sm = call.info().sm_clock_max_mhz;
  if (!mem || !sm) return NVML_ERROR_NOT_SUPPORTED;
  if (memoryClockMHz != static_cast<unsigned>(*mem))
    return NVML_ERROR_NOT_FOUND;  // not a supported memory clock
  std::vector<unsigned> clocks;
  for (int c = *sm; c >= static_cast<int>(kMinGraphicsClockMhz);
       c -= static_cast<int>(kGraphicsClockStepMhz)) {
    clocks.push_back(static_cast<unsigned>(c));
  }
  return answer_list(clocks, count, clocksMHz);
}

FAKE_NVML_EXPORT nvmlReturn_t
nvmlDeviceGetDisplayActive(nvmlDevice_t device, nvmlEnableState_t* isActive) {
  DeviceCall call("nvmlDeviceGetDisplayActive", device);
  if (call.status() != NVML_SUCCESS) return call.status();
  if (isActive == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *isActive = NVML_FEATURE_DISABLED;  // no display on a datacenter GPU
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t
nvmlDeviceGetDisplayMode(nvmlDevice_t device, nvmlEnableState_t* display) {
  DeviceCall call("nvmlDeviceGetDisplayMode", device);
  if (call.status() != NVML_SUCCESS) return call.status();
  if (display == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *display = NVML_FEATURE_DISABLED;
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetClock(nvmlDevice_t device,
                                                 nvmlClockType_t clockType,
                                                 nvmlClockId_t clockId,
                                                 unsigned int* clockMHz) {
  DeviceCall call("nvmlDeviceGetClock", device);
  if (call.status() != NVML_SUCCESS) return call.status();
  if (clockMHz == nullptr || clockType >= NVML_CLOCK_COUNT ||
      clockId >= NVML_CLOCK_ID_COUNT) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  if (clockType == NVML_CLOCK_VIDEO) return NVML_ERROR_NOT_SUPPORTED;
  const bool mem = clockType == NVML_CLOCK_MEM;
  gd::opt<int> v;
  if (clockId == NVML_CLOCK_ID_CURRENT) {
    v = mem ? call.sample().mem_clock_mhz : call.sample().sm_clock_mhz;
  } else {
    // Application clocks (target, default) and the customer boost clock of
    // an A100/H100 are its maximum clocks.
    v = mem ? call.info().mem_clock_max_mhz : call.info().sm_clock_max_mhz;
  }
  if (!v) return NVML_ERROR_NOT_SUPPORTED;
  *clockMHz = static_cast<unsigned>(*v);
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlUnitGetCount(unsigned int* unitCount) {
  SystemCall call("nvmlUnitGetCount");
  if (call.status() != NVML_SUCCESS) return call.status();
  if (unitCount == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *unitCount = 0;  // S-class units only; no datacenter system has one
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t
nvmlGetExcludedDeviceCount(unsigned int* deviceCount) {
  SystemCall call("nvmlGetExcludedDeviceCount");
  if (call.status() != NVML_SUCCESS) return call.status();
  if (deviceCount == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *deviceCount = 0;  // no GPU excluded by the driver
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlSystemGetProcessName(unsigned int pid,
                                                       char* name,
                                                       unsigned int length) {
  SystemCall call("nvmlSystemGetProcessName");
  if (call.status() != NVML_SUCCESS) return call.status();
  if (name == nullptr || length == 0) return NVML_ERROR_INVALID_ARGUMENT;
  // As the driver does: the process's command (argv[0]) from /proc.
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline",
                   std::ios::binary);
  std::string argv0;
  if (!in || !std::getline(in, argv0, '\0') || argv0.empty()) {
    std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
    if (!comm || !std::getline(comm, argv0) || argv0.empty())
      return NVML_ERROR_NOT_FOUND;
  }
  // NVML truncates a name longer than the buffer.
  if (argv0.size() + 1 > length) argv0.resize(length - 1);
  return fake_nvml::copy_string(argv0, name, length);
}
