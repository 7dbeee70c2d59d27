// Bounds on what the kubelet and the container runtime may hand gpudoctor:
// both are hostile input like every other (a wrong or lying server, a node
// with thousands of pods). Kubernetes' own limits: object names up to 253
// characters (DNS subdomain), namespaces and container names up to 63.
#pragma once

#include <cstddef>

namespace gd::pods {

inline constexpr size_t kMaxPods = 10000;
inline constexpr size_t kMaxContainersPerPod = 64;
inline constexpr size_t kMaxDevicesPerContainer = 64;
inline constexpr size_t kMaxIdsPerDevice = 256;
inline constexpr size_t kMaxRuntimeContainers = 20000;
inline constexpr size_t kMaxName = 253;
// Device ids over all pods: a GPU node has at most a few hundred (8 GPUs,
// 7 MIG devices each, tens of time-slicing replicas); pods beyond this
// keep their names but not their devices.
inline constexpr size_t kMaxAllocations = 16384;
// A reply larger than this is cut off by gRPC itself (a flood of pods).
inline constexpr int kMaxReplyBytes = 64 << 20;
// The JSON the plugin hands over.
inline constexpr size_t kMaxSnapshotBytes = 48 << 20;

}  // namespace gd::pods
