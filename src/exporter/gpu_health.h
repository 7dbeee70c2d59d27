// Each GPU's health as a device plugin, an operator or a scheduler reads it
// (serve's /api/v1/health and gpudoctor_gpu_health): from the latest
// collection and the findings that fire. One function for both surfaces,
// so they never disagree.
//   unhealthy  lost; a critical finding fires about it; or NVML asks for a
//              recovery action (reset, reboot, drain)
//   degraded   a warning fires about it
//   healthy    it answered and nothing above holds
//   unknown    it did not answer in time, or nothing was judged yet: never
//              called healthy without evidence
#pragma once

#include <string>
#include <vector>

#include "exporter/metrics_input.h"

namespace gd {

inline constexpr const char* kGpuHealthy = "healthy";
inline constexpr const char* kGpuDegraded = "degraded";
inline constexpr const char* kGpuUnhealthy = "unhealthy";
inline constexpr const char* kGpuHealthUnknown = "unknown";

struct GpuHealthVerdict {
  int gpu = 0;
  std::string uuid;
  std::string state;  // kGpuHealthy, ...
  // Why, in a few words ("critical: xid-error; NVML asks for gpu_reset");
  // "" when healthy.
  std::string reason;
  std::vector<std::string> findings;  // firing, warning or critical
  std::string recovery_action;        // NVML's, "" unknown
};

struct NodeHealth {
  std::vector<GpuHealthVerdict> gpus;  // the header's GPUs, index order
  // Firing warning or critical findings about the host as a whole: shown,
  // never counted against a GPU.
  std::vector<std::string> host_findings;
};

NodeHealth node_health(const MetricsInput& in);

// gpudoctor_gpu_health{gpu, UUID, state} 1 for each GPU's state, 0 for the
// other three.
void render_gpu_health_family(const MetricsInput& in, std::string& out);

}  // namespace gd
