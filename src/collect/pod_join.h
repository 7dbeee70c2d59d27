// Which pod a process runs in: its cgroup names the pod's UID and the
// container's id (common/container_ref.h); the container runtime's and the
// kubelet's lists (pods/pod_snapshot.h) give the names and say whether the
// pod still exists.
#pragma once

#include <optional>

#include "model/sample.h"
#include "pods/pod_snapshot.h"

namespace gd {

// nullopt: the cgroup names no pod. `snapshot` nullptr: nothing was read
// (not on Kubernetes, or the services have not answered): the UID alone.
std::optional<ProcessPod> process_pod(const std::optional<std::string>& cgroup,
                                      const pods::PodSnapshot* snapshot);

// Fills every process's `pod`.
void attach_pods(std::vector<ProcessSample>& processes,
                 const pods::PodSnapshot* snapshot);

// The kubelet's allocations of this host's GPUs (by GPU UUID, or the UUID
// of a MIG device in `gpus`); other devices (another plugin's ids) are
// left out. nullopt when the kubelet did not answer.
std::optional<std::vector<PodAllocation>> gpu_allocations(
    const pods::PodSnapshot* snapshot, const std::vector<GpuInfo>& gpus,
    const std::vector<GpuSample>& samples);

}  // namespace gd
