// Prometheus text exposition (format 0.0.4) of one snapshot.
//
// Family 1 mirrors dcgm-exporter's default counters (names, units, types and
// labels gpu, UUID, pci_bus_id, device, modelName, Hostname,
// DCGM_FI_DRIVER_VERSION) so NVIDIA's Grafana dashboard works unchanged.
// Family 2 is native gpudoctor_* for what DCGM lacks: per-process GPU memory
// and CPU, clock-event reasons, PCIe link vs max, host pressure, collection
// health and findings; each carries family 1's Hostname label too, so a
// fleet's Prometheus joins them to the node even behind a Kubernetes Service.
//
// A GPU that is stale (hung read) or lost has no value series at all (so
// Prometheus marks them stale); gpudoctor_collect_success{gpu} 0 says why.
#pragma once

#include <string>
#include <vector>

#include "exporter/metrics_input.h"

namespace gd {

inline constexpr const char* kPrometheusContentType =
    "text/plain; version=0.0.4; charset=utf-8";

// Appends the whole page to `out` (cleared first).
void render_metrics(const MetricsInput& in, std::string& out);
// The page in two parts, for a server that renders the first once per
// sample and the second per scrape: everything but `in.now` (`out` cleared
// first), then the families that depend on the scrape time (the sample
// ages; appended). render_metrics() is the two in a row.
void render_metrics_of_snapshot(const MetricsInput& in, std::string& out);
void render_age_families(const MetricsInput& in, std::string& out);
inline std::string render_metrics(const MetricsInput& in) {
  std::string out;
  render_metrics(in, out);
  return out;
}

// Internal pieces, one per family group (exposed for tests).
void render_dcgm_families(const MetricsInput& in, std::string& out);
// RDMA ports: node_exporter's node_infiniband_* (no Hostname label, as
// node_exporter writes them) and gpudoctor_rdma_* (rdma_families.cc).
void render_node_infiniband_families(const MetricsInput& in, std::string& out);
void render_rdma_native_families(const MetricsInput& in, std::string& out);
// The gpudoctor_* families without their Hostname label, which
// render_metrics_of_snapshot and render_age_families add to every series.
void render_native_families(const MetricsInput& in, std::string& out);
void render_age_family_lines(const MetricsInput& in, std::string& out);
// Part of the native families: gpudoctor_gpu_job_info, one series per GPU
// and Slurm job on it, to join at query time (slurm_families.cc).
void render_slurm_job_info(const MetricsInput& in, std::string& out);
// Part of the native families: gpudoctor_gpu_pod_info, one series per
// kubelet allocation of a GPU to a pod's container (pod_families.cc).
void render_pod_info(const MetricsInput& in, std::string& out);
// Part of the native families: memory health (ECC, row remapper, recovery
// action) and failed reads of the answered GPUs, `labels[i]` being row i's
// label set (memory_health_families.cc).
struct GpuRow;
void render_memory_health_families(const std::vector<GpuRow>& rows,
                                   const std::vector<std::string>& labels,
                                   std::string& out);
void render_read_error_family(const std::vector<GpuRow>& rows,
                              const std::vector<std::string>& labels,
                              std::string& out);

// dcgm-exporter's label set of a GPU (gpu, UUID, pci_bus_id, device,
// modelName, Hostname, DCGM_FI_DRIVER_VERSION), with GPU_I_PROFILE and
// GPU_I_ID after modelName for one of its MIG instances.
std::string dcgm_labels(const GpuRow& row, const MetricsInput& in,
                        const MigInstance* instance = nullptr);
// The dcgm-exporter families of datacenter GPUs (datacenter_families.cc):
// profiling (DCGM_FI_PROF_*, ratios 0..1, per MIG instance where the GPU is
// split) and NVLink.
void render_dcgm_datacenter_families(const std::vector<GpuRow>& rows,
                                     const std::vector<std::string>& labels,
                                     const MetricsInput& in, std::string& out);
// Native gpudoctor_* families of datacenter GPUs: GPM activity, NVLink
// links, the fabric, MIG mode and instances.
void render_native_datacenter_families(const std::vector<GpuRow>& rows,
                                       const std::vector<std::string>& labels,
                                       std::string& out);

// DCGM_FI_DEV_CLOCK_THROTTLE_REASONS bit mask of the model's reason names
// (NVML's nvmlClocksThrottleReason* values); unknown names are ignored.
uint64_t clock_event_reason_mask(const std::vector<std::string>& reasons);

}  // namespace gd
