// What the kubelet and the container runtime said, as gpudoctor keeps it:
// the GPUs (and MIG devices, and time-slicing replicas) each pod's
// containers were given, and the pod and container each running container id
// belongs to. Read from libgpudoctor-pods.so's JSON (pods_plugin_abi.h),
// which is hostile input like any other: every count and string is capped
// again here.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/container_ref.h"

namespace gd::pods {

// A pod's container, as the operator names it.
struct PodName {
  std::string uid;  // "" when only the kubelet told (it gives no UID)
  std::string namespace_;
  std::string name;
  std::string container;  // "" when the container is not known
  // "ml/train-0/main" (what a POD column shows).
  std::string text() const;
};

// One device the kubelet gave a container: `id` without the device plugin's
// replica suffix ("GPU-8a1d...::3" under time-slicing: `id` "GPU-8a1d...",
// `replica` 3).
struct Allocation {
  PodName pod;
  std::string resource;  // "nvidia.com/gpu", "nvidia.com/mig-1g.10gb"
  std::string id;        // a GPU or MIG UUID, or another plugin's device id
  std::optional<int> replica;
};

struct PodSnapshot {
  bool kubelet_asked = false, runtime_asked = false;
  std::string kubelet_error, runtime_error;  // "" when it answered
  std::vector<Allocation> allocations;
  std::vector<std::string> allocatable;  // device ids the kubelet manages
  std::unordered_set<std::string> kubelet_pods;  // "namespace/name"
  // By the first 12 characters of the container id (ContainerRef::id).
  std::unordered_map<std::string, PodName> containers;
  // Pods the runtime knows, by UID.
  std::unordered_map<std::string, PodName> pods_by_uid;

  // The pod and container of a process's cgroup: the container id through
  // the runtime's list, else the pod UID alone (a pod the runtime does not
  // list: deleted, or the runtime not asked). nullopt: not a pod.
  std::optional<PodName> pod_of(const ContainerRef& ref) const;
  // Whether a pod the cgroup names is one the kubelet still lists.
  bool kubelet_lists(const PodName& pod) const;
};

// Parses the plugin's JSON; a malformed document gives an empty snapshot
// whose errors say so.
PodSnapshot parse_pod_snapshot(std::string_view json);

// Splits the time-slicing replica suffix off a device id: "GPU-x::3" ->
// ("GPU-x", 3); an id without one is returned whole.
std::pair<std::string, std::optional<int>> split_replica(std::string_view id);

}  // namespace gd::pods
