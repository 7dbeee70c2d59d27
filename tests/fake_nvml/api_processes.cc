// Running-process lists with NVML's two-call protocol: a caller asks with
// *infoCount = its buffer's capacity; if that is too small NVML sets
// *infoCount to the number needed and answers INSUFFICIENT_SIZE (infos may be
// NULL then), otherwise it fills the buffer and sets *infoCount.
#include <string>
#include <vector>

#include "state.h"

using fake_nvml::DeviceCall;

namespace {

// The instance ids NVML reports for a process on no MIG instance.
constexpr unsigned kNoInstance = 0xFFFFFFFFu;

void fill(nvmlProcessInfo_v1_t& out, const gd::GpuProcess& p) {
  out.pid = p.pid;
  out.usedGpuMemory = p.used_bytes.value_or(
      static_cast<unsigned long long>(NVML_VALUE_NOT_AVAILABLE));
}

template <typename Info>
void fill(Info& out, const gd::GpuProcess& p) {  // v2 and v3 layouts
  out.pid = p.pid;
  out.usedGpuMemory = p.used_bytes.value_or(
      static_cast<unsigned long long>(NVML_VALUE_NOT_AVAILABLE));
  out.gpuInstanceId = p.gi_id.value_or(kNoInstance);
  out.computeInstanceId = p.ci_id.value_or(kNoInstance);
}

bool listed(const gd::GpuProcess& p, bool compute) {
  return p.type == "compute+graphics" ||
         p.type == (compute ? "compute" : "graphics");
}

template <typename Info>
nvmlReturn_t processes(const char* function, nvmlDevice_t device,
                       unsigned int* infoCount, Info* infos, bool compute) {
  // A MIG device lists the processes on its instance; the GPU lists all.
  DeviceCall call(function, device, DeviceCall::Mig::kAccept);
  if (call.status() != NVML_SUCCESS) return call.status();
  if (infoCount == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const auto& all = call.sample().processes;
  if (!all) return NVML_ERROR_NOT_SUPPORTED;
  std::vector<const gd::GpuProcess*> mine;
  for (const auto& p : *all) {
    if (call.is_mig() &&
        (p.gi_id != call.mig().gi_id || p.ci_id != call.mig().ci_id))
      continue;
    if (listed(p, compute)) mine.push_back(&p);
  }
  if (*infoCount < mine.size()) {
    *infoCount = static_cast<unsigned>(mine.size());
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  if (!mine.empty() && infos == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  for (size_t i = 0; i < mine.size(); ++i) fill(infos[i], *mine[i]);
  *infoCount = static_cast<unsigned>(mine.size());
  return NVML_SUCCESS;
}

}  // namespace

#ifndef FAKE_NVML_OLD_API
FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(
    nvmlDevice_t device, unsigned int* infoCount, nvmlProcessInfo_t* infos) {
  return processes("nvmlDeviceGetComputeRunningProcesses_v3", device, infoCount,
                   infos, true);
}
#endif

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(
    nvmlDevice_t device, unsigned int* infoCount, nvmlProcessInfo_v2_t* infos) {
  return processes("nvmlDeviceGetComputeRunningProcesses_v2", device, infoCount,
                   infos, true);
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(
    nvmlDevice_t device, unsigned int* infoCount, nvmlProcessInfo_v1_t* infos) {
  return processes("nvmlDeviceGetComputeRunningProcesses", device, infoCount,
                   infos, true);
}

#ifndef FAKE_NVML_OLD_API
FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(
    nvmlDevice_t device, unsigned int* infoCount, nvmlProcessInfo_t* infos) {
  return processes("nvmlDeviceGetGraphicsRunningProcesses_v3", device,
                   infoCount, infos, false);
}
#endif

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v2(
    nvmlDevice_t device, unsigned int* infoCount, nvmlProcessInfo_v2_t* infos) {
  return processes("nvmlDeviceGetGraphicsRunningProcesses_v2", device,
                   infoCount, infos, false);
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses(
    nvmlDevice_t device, unsigned int* infoCount, nvmlProcessInfo_v1_t* infos) {
  return processes("nvmlDeviceGetGraphicsRunningProcesses", device, infoCount,
                   infos, false);
}
