// Which container a process runs in, from its cgroup path. Docker, podman,
// containerd, CRI-O and Kubernetes put ids in the path (cgroupfs and systemd
// drivers, cgroup v1 and v2); nothing else is asked of a runtime.
#pragma once

#include <optional>
#include <string>

namespace gd {

struct ContainerRef {
  std::string runtime;  // docker | containerd | cri-o | podman | lxc | ""
  std::string id;       // first 12 characters of the container id, or lxc name
  std::string pod_uid;  // Kubernetes pod UID (dashes), "" when not a pod
  std::string pod_qos;  // guaranteed | burstable | besteffort | ""

  bool empty() const { return runtime.empty() && pod_uid.empty(); }
  // "docker 3c4d5e6f7a8b", "k8s pod 1a2b3c4d-... (burstable), containerd
  // 3c4d..."
  std::string describe() const;
  // The short form of a table cell: "docker:3c4d5e6f7a8b",
  // "k8s-pod:1a2b3c4d-5e6" (a pod names its pod), "" for no container.
  std::string short_text() const;
};

ContainerRef container_from_cgroup(const std::string& cgroup_path);
inline ContainerRef container_from_cgroup(const char* path) {
  return container_from_cgroup(std::string(path));
}
inline ContainerRef container_from_cgroup(
    const std::optional<std::string>& cg) {
  return cg ? container_from_cgroup(*cg) : ContainerRef{};
}

}  // namespace gd
