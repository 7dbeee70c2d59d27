// gpudoctor_gpu_pod_info: which pod's container the kubelet gave each GPU
// (its pod-resources API), one info series per allocation, also while the
// pod runs nothing on it. Joined at query time like the job info:
//   DCGM_FI_DEV_GPU_UTIL * on(gpu) group_left(namespace, pod, container)
//     gpudoctor_gpu_pod_info
// Bounded: at most kMaxSeries; the names are the pods' own text, escaped
// and capped.
#include <string>

#include "exporter/exporter.h"
#include "exporter/family_writer.h"
#include "exporter/prom_text.h"

namespace gd {

namespace {
constexpr size_t kMaxPodSeries = 512;
}  // namespace

void render_pod_info(const MetricsInput& in, std::string& out) {
  if (in.sample == nullptr || !in.sample->pod_allocations ||
      in.sample->pod_allocations->empty())
    return;
  prom::FamilyWriter f(
      out, "gpudoctor_gpu_pod_info", "gauge",
      "1 for each Kubernetes pod container the kubelet allocated the GPU to "
      "(replica: the time-slicing share, \"\" for a whole GPU). Join on gpu.");
  size_t series = 0;
  for (const PodAllocation& a : *in.sample->pod_allocations) {
    if (series++ == kMaxPodSeries) return;
    prom::Labels l;
    l.add("gpu", int64_t{a.gpu});
    l.add_untrusted("uuid", a.uuid);
    l.add_untrusted("namespace", a.namespace_);
    l.add_untrusted("pod", a.name);
    l.add_untrusted("container", a.container);
    l.add_untrusted("resource", a.resource);
    l.add("replica", a.replica ? std::to_string(*a.replica) : "");
    f.add(l.body(), 1.0);
  }
}

}  // namespace gd
