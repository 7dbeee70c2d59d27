// Helpers shared by the RDMA port rules (rdma-port-down, rdma-port-degraded,
// rdma-errors, comm-bound): naming a port, finding its device in the
// header, and the GPUs near it. Header-only, like workload_common.h, so that
// the rules/*.cc glob stays the only build input.
//
// "Near" (the GPUs a port serves, the ports a job uses): the same NUMA node
// as the port's device. The trace has each device's and each GPU's NUMA
// node but not the PCIe switches between them; NCCL itself prefers the NIC
// closest to each GPU, which on every current server shares the GPU's NUMA
// node (and usually its switch). Where the NUMA node of the device or of the
// GPUs is unknown (a one-node host reports -1), every port counts as near
// every GPU: there is then nothing to tell them apart.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <vector>

#include "diagnose/evidence.h"
#include "model/sample.h"

namespace gd::rdma {

// "mlx5_0/1".
inline std::string port_name(std::string_view device, int port) {
  return fmt::format("{}/{}", device, port);
}

inline const RdmaDevice* find_device(const TraceHeader& h,
                                     std::string_view device) {
  if (!h.host.rdma_devices) return nullptr;
  for (const RdmaDevice& d : *h.host.rdma_devices)
    if (d.device == device) return &d;
  return nullptr;
}

inline const RdmaPortInfo* find_port_info(const TraceHeader& h,
                                          std::string_view device, int port) {
  const RdmaDevice* d = find_device(h, device);
  if (!d) return nullptr;
  for (const RdmaPortInfo& p : d->ports)
    if (p.port == port) return &p;
  return nullptr;
}

// Whether a port of `device` is near GPU `gpu` (see above).
inline bool near_gpu(const TraceHeader& h, std::string_view device, int gpu) {
  const RdmaDevice* d = find_device(h, device);
  const GpuInfo* g = find_gpu_info(h, gpu);
  if (!d || !g || !d->numa_node || !g->numa_node) return true;
  return *d->numa_node == *g->numa_node;
}

// The header's GPUs near `device`, in index order.
inline std::vector<int> gpus_near(const TraceHeader& h,
                                  std::string_view device) {
  std::vector<int> out;
  for (const GpuInfo& g : h.gpus)
    if (near_gpu(h, device, g.index)) out.push_back(g.index);
  return out;
}

// "GPUs 0-3 (NUMA node 3)" / "no GPU of this host"; for evidence.
inline std::string near_text(const TraceHeader& h, std::string_view device) {
  const std::vector<int> gpus = gpus_near(h, device);
  if (gpus.empty()) return "no GPU of this host near it";
  std::string list;
  for (size_t i = 0; i < gpus.size(); ++i)
    list += (i ? "," : "") + std::to_string(gpus[i]);
  const RdmaDevice* d = find_device(h, device);
  if (d && d->numa_node)
    return fmt::format("GPU{} {} share its NUMA node {}",
                       gpus.size() > 1 ? "s" : "", list, *d->numa_node);
  return fmt::format("GPU{} {} (NUMA placement unknown)",
                     gpus.size() > 1 ? "s" : "", list);
}

// Growth of a cumulative counter over the window: a drop is a reset (the
// counters were cleared, perfquery -R), a new baseline, not negative growth.
struct Growth {
  opt<uint64_t> prev;
  uint64_t growth = 0;
  size_t grew_samples = 0;         // samples in which it grew
  double first_t = 0, last_t = 0;  // first and last reading
  double first_growth_t = 0, last_growth_t = 0;
  bool known = false;
  void add(double t, const opt<uint64_t>& v) {
    if (!v) return;
    if (!known) first_t = t;
    known = true;
    last_t = t;
    if (prev && *v > *prev) {
      if (grew_samples++ == 0) first_growth_t = t;
      last_growth_t = t;
      growth += *v - *prev;
    }
    prev = v;
  }
  double span() const { return last_t - first_t; }
};

}  // namespace gd::rdma
