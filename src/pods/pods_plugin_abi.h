// The C interface of libgpudoctor-pods.so, the one part of gpudoctor that
// links gRPC and protobuf (about fifty shared libraries the binaries do not
// carry otherwise). gpudoctor dlopen()s it only where a kubelet socket
// exists, as it does libnvidia-ml: a host without Kubernetes, or without the
// library, loads none of it and shows no pods.
#pragma once

#include <cstddef>

extern "C" {

// The symbol gpudoctor looks up, and the version of this interface.
#define GD_PODS_SNAPSHOT_SYMBOL "gd_pods_snapshot_v1"
#define GD_PODS_FREE_SYMBOL "gd_pods_free_v1"

// One reading of both services, each call within `deadline_ms`:
// `pod_resources_socket` (kubelet: List, GetAllocatableResources) and
// `cri_socket` (the container runtime: ListPodSandbox, ListContainers); an
// empty path skips that service. Writes a NUL-terminated JSON object of at
// most `max_bytes` to *out (free it with gd_pods_free_v1):
//   {"kubelet": {"error": null|"...", "pods": [{"namespace", "name",
//      "containers": [{"name", "devices": [{"resource", "ids": [...]}]}]}],
//      "allocatable": [{"resource", "ids": [...]}]},
//    "runtime": {"error": null|"...", "sandboxes": [{"id", "uid",
//      "namespace", "name", "ready"}], "containers": [{"id", "sandbox_id",
//      "name", "running"}]}}
// Every list and string is capped (pods_limits.h). Returns 0; nonzero only
// when nothing could be written (out of memory).
typedef int (*gd_pods_snapshot_fn)(const char* pod_resources_socket,
                                   const char* cri_socket, int deadline_ms,
                                   size_t max_bytes, char** out);
typedef void (*gd_pods_free_fn)(char* json);
}
