// Loads libgpudoctor-pods.so (pods_plugin_abi.h) and reads both services
// through it. Where it looks: $GPUDOCTOR_PODS_LIB when set, else beside the
// binary's bundle ($ORIGIN/../lib, then $ORIGIN), else the loader's path.
// The sockets: the kubelet's pod-resources socket and the container
// runtime's, found as crictl finds them (containerd, CRI-O, cri-dockerd) or
// given. A host with neither socket loads nothing.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "pods/pod_snapshot.h"

namespace gd::pods {

inline constexpr const char* kPodResourcesSocket =
    "/var/lib/kubelet/pod-resources/kubelet.sock";
// crictl's default endpoints, in its order.
inline const std::vector<std::string> kCriSockets = {
    "/run/containerd/containerd.sock", "/run/crio/crio.sock",
    "/var/run/cri-dockerd.sock"};

struct PodSockets {
  std::string pod_resources;  // "" = none
  std::string cri;            // "" = none
  bool any() const { return !pod_resources.empty() || !cri.empty(); }
};

// The sockets that exist under `root` ("" = /): GPUDOCTOR_POD_RESOURCES_SOCKET
// and GPUDOCTOR_CRI_SOCKET override the defaults ("none" turns one off).
PodSockets find_pod_sockets(const std::string& root = "");

class PodsLibrary {
 public:
  PodsLibrary();  // loads nothing yet
  ~PodsLibrary();
  PodsLibrary(const PodsLibrary&) = delete;
  PodsLibrary& operator=(const PodsLibrary&) = delete;

  // One reading, each call within `deadline`. When the library cannot be
  // loaded, the snapshot's errors say why (both services "not asked").
  PodSnapshot read(const PodSockets& sockets,
                   std::chrono::milliseconds deadline);
  const std::string& load_error() const { return load_error_; }

 private:
  bool load();
  void* handle_ = nullptr;
  void* snapshot_ = nullptr;
  void* free_ = nullptr;
  bool tried_ = false;
  std::string load_error_;
};

}  // namespace gd::pods
