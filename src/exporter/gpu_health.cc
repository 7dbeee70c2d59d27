#include "exporter/gpu_health.h"

#include <algorithm>

#include "exporter/family_writer.h"
#include "exporter/prom_text.h"

namespace gd {
namespace {

void add_once(std::vector<std::string>& v, const std::string& s) {
  if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
}

const GpuSample* sample_of(const MetricsInput& in, int index) {
  if (!in.sample) return nullptr;
  for (const GpuSample& g : in.sample->gpus)
    if (g.index == index) return &g;
  return nullptr;
}

GpuHealthVerdict judge(const MetricsInput& in, const GpuInfo& info) {
  GpuHealthVerdict v;
  v.gpu = info.index;
  v.uuid = info.uuid;
  const GpuSample* g = sample_of(in, info.index);
  if (!g) {
    v.state = kGpuHealthUnknown;
    v.reason = in.sample ? "not in the latest sample" : "no sample yet";
    return v;
  }
  if (g->lost) {
    v.state = kGpuUnhealthy;
    v.reason = "the GPU is lost (NVML)";
    return v;
  }
  if (g->stale) {
    v.state = kGpuHealthUnknown;
    v.reason = "it did not answer within the deadline";
    return v;
  }
  v.recovery_action = g->recovery_action;
  std::string worst;
  for (const ExportedFinding& f : in.findings) {
    if (f.alert_state != "firing") continue;
    if (f.severity != "critical" && f.severity != "warning") continue;
    if (std::find(f.gpus.begin(), f.gpus.end(), info.index) == f.gpus.end())
      continue;
    add_once(v.findings, f.id);
    if (f.severity == "critical") worst = "critical";
    if (worst.empty()) worst = "warning";
  }
  const bool action =
      !g->recovery_action.empty() && g->recovery_action != kRecoveryNone;
  if (!worst.empty()) {
    std::string ids;
    for (const auto& id : v.findings) ids += (ids.empty() ? "" : ", ") + id;
    v.reason = worst + ": " + ids;
  }
  if (action)
    v.reason += (v.reason.empty() ? "" : "; ") + std::string("NVML asks for ") +
                g->recovery_action;
  if (worst == "critical" || action)
    v.state = kGpuUnhealthy;
  else if (worst == "warning")
    v.state = kGpuDegraded;
  else if (!in.evaluated) {
    v.state = kGpuHealthUnknown;
    v.reason = "the findings are not evaluated yet";
  } else {
    v.state = kGpuHealthy;
  }
  return v;
}

}  // namespace

NodeHealth node_health(const MetricsInput& in) {
  NodeHealth out;
  if (!in.header) return out;
  for (const GpuInfo& info : in.header->gpus)
    out.gpus.push_back(judge(in, info));
  std::sort(out.gpus.begin(), out.gpus.end(),
            [](const auto& a, const auto& b) { return a.gpu < b.gpu; });
  for (const ExportedFinding& f : in.findings)
    if (f.alert_state == "firing" && f.gpus.empty() &&
        (f.severity == "critical" || f.severity == "warning"))
      add_once(out.host_findings, f.id);
  return out;
}

void render_gpu_health_family(const MetricsInput& in, std::string& out) {
  using prom::FamilyWriter;
  using prom::Labels;
  FamilyWriter f(out, "gpudoctor_gpu_health", "gauge",
                 "1 for the GPU's health (healthy, degraded, unhealthy, "
                 "unknown: as /api/v1/health), else 0.");
  static constexpr const char* kStates[] = {kGpuHealthy, kGpuDegraded,
                                            kGpuUnhealthy, kGpuHealthUnknown};
  for (const GpuHealthVerdict& v : node_health(in).gpus)
    for (const char* state : kStates)
      f.add(Labels()
                .add("gpu", int64_t{v.gpu})
                .add("UUID", v.uuid)
                .add("state", state)
                .body(),
            v.state == state ? 1.0 : 0.0);
}

}  // namespace gd
