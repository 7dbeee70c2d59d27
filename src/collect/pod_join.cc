#include "collect/pod_join.h"

#include <string_view>

#include "common/container_ref.h"

namespace gd {
namespace {

std::optional<std::string> known(const std::string& s) {
  return s.empty() ? std::nullopt : std::optional<std::string>(s);
}

// Deleted: the kubelet answered and does not list the pod by its name; or,
// with the name unknown (the runtime does not list the pod's UID either),
// the runtime answered. Whoever was not asked, or failed, says nothing.
std::optional<bool> deleted(const pods::PodSnapshot& snap,
                            const pods::PodName& pod) {
  const bool kubelet_answered =
      snap.kubelet_asked && snap.kubelet_error.empty();
  const bool runtime_answered =
      snap.runtime_asked && snap.runtime_error.empty();
  if (!pod.name.empty() && kubelet_answered) return !snap.kubelet_lists(pod);
  if (pod.name.empty() && runtime_answered) return true;
  return std::nullopt;
}

}  // namespace

std::optional<ProcessPod> process_pod(const std::optional<std::string>& cgroup,
                                      const pods::PodSnapshot* snapshot) {
  // Every pod's cgroup lies under the kubelet's "kubepods" tree: the
  // parse (a regex) runs only there, never for the host's other processes.
  if (!cgroup ||
      std::string_view(*cgroup).find("kubepods") == std::string_view::npos)
    return std::nullopt;
  const ContainerRef ref = container_from_cgroup(*cgroup);
  if (ref.pod_uid.empty()) return std::nullopt;
  ProcessPod out;
  out.uid = ref.pod_uid;
  if (!snapshot) return out;
  const auto pod = snapshot->pod_of(ref);
  if (!pod) return out;
  if (!pod->uid.empty()) out.uid = pod->uid;
  out.namespace_ = known(pod->namespace_);
  out.name = known(pod->name);
  out.container = known(pod->container);
  out.deleted = deleted(*snapshot, *pod);
  return out;
}

std::optional<std::vector<PodAllocation>> gpu_allocations(
    const pods::PodSnapshot* snapshot, const std::vector<GpuInfo>& gpus,
    const std::vector<GpuSample>& samples) {
  if (!snapshot || !snapshot->kubelet_asked || !snapshot->kubelet_error.empty())
    return std::nullopt;
  auto gpu_of = [&](const std::string& uuid) -> std::optional<int> {
    for (const GpuInfo& g : gpus)
      if (!g.uuid.empty() && g.uuid == uuid) return g.index;
    for (const GpuSample& g : samples)
      if (g.mig_instances)
        for (const MigInstance& m : *g.mig_instances)
          if (!m.uuid.empty() && m.uuid == uuid) return g.index;
    return std::nullopt;
  };
  std::vector<PodAllocation> out;
  for (const pods::Allocation& a : snapshot->allocations) {
    if (out.size() == kPodAllocationsMax) break;
    const auto gpu = gpu_of(a.id);
    if (!gpu) continue;
    out.push_back({*gpu, a.id, a.replica, a.resource, a.pod.namespace_,
                   a.pod.name, a.pod.container});
  }
  return out;
}

void attach_pods(std::vector<ProcessSample>& processes,
                 const pods::PodSnapshot* snapshot) {
  for (ProcessSample& p : processes) p.pod = process_pod(p.cgroup, snapshot);
}

}  // namespace gd
