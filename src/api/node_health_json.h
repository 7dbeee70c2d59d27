// GET /api/v1/health (docs/serve.md): each GPU's health for a device
// plugin, an operator or a scheduler to poll: healthy, degraded, unhealthy
// or unknown, with the firing findings and NVML's recovery action. Written
// by serve (exporter/gpu_health.h judges); read by tests and the fuzz
// harness.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gd::api {

struct GpuHealthEntry {
  int gpu = 0;
  std::string uuid;
  std::string state;  // healthy | degraded | unhealthy | unknown
  std::string reason;
  std::vector<std::string> findings;
  std::string recovery_action;  // "" unknown (null)
};

struct NodeHealthReply {
  std::string node;                    // the hostname
  std::string state;                   // the worst of the GPUs' states
  std::optional<double> evaluated_at;  // findings' last evaluation
  std::vector<GpuHealthEntry> gpus;
  std::vector<std::string> host_findings;  // firing, about the host
};

// The worst state of `gpus` (unhealthy > unknown > degraded > healthy);
// "unknown" for a node without GPUs.
std::string worst_gpu_state(const std::vector<GpuHealthEntry>& gpus);

std::string node_health_json(const NodeHealthReply& r);

// Throws std::runtime_error with one line naming what is wrong. Texts are
// cut to 256 bytes; at most 1024 GPUs and 256 findings each.
NodeHealthReply parse_node_health_json(std::string_view body);

}  // namespace gd::api
