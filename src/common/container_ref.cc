#include "common/container_ref.h"

#include <algorithm>
#include <regex>

namespace gd {

namespace {
// Container ids are 64 hex digits; tools (docker ps, crictl ps) show 12.
constexpr size_t kShortIdLength = 12;
}  // namespace

std::string ContainerRef::describe() const {
  std::string out;
  if (!pod_uid.empty()) {
    out = "k8s pod " + pod_uid;
    if (!pod_qos.empty()) out += " (" + pod_qos + ")";
  }
  if (!runtime.empty()) {
    if (!out.empty()) out += ", ";
    out += runtime + " " + id;
  }
  return out;
}

std::string ContainerRef::short_text() const {
  if (!pod_uid.empty()) return "k8s-pod:" + pod_uid.substr(0, kShortIdLength);
  if (!runtime.empty()) return runtime + ":" + id;
  return {};
}

ContainerRef container_from_cgroup(const std::string& path) {
  ContainerRef r;
  std::smatch m;
  // Kubernetes: ".../kubepods/burstable/pod<uid>/..." (cgroupfs driver) or
  // ".../kubepods-burstable-pod<uid_with_underscores>.slice/..." (systemd).
  // Guaranteed pods sit directly under kubepods, with no QoS level.
  static const std::regex pod(
      R"(kubepods.*?pod([0-9a-fA-F]{8}[-_][0-9a-fA-F]{4}[-_][0-9a-fA-F]{4}[-_][0-9a-fA-F]{4}[-_][0-9a-fA-F]{12}))");
  if (std::regex_search(path, m, pod)) {
    r.pod_uid = m[1].str();
    std::replace(r.pod_uid.begin(), r.pod_uid.end(), '_', '-');
    std::string before = m.prefix().str() + m[0].str();
    r.pod_qos = before.find("burstable") != std::string::npos    ? "burstable"
                : before.find("besteffort") != std::string::npos ? "besteffort"
                                                                 : "guaranteed";
  }
  struct Pattern {
    const char* runtime;
    std::regex re;
  };
  static const Pattern patterns[] = {
      {"containerd", std::regex(R"(cri-containerd-([0-9a-f]{12,64}))")},
      {"cri-o", std::regex(R"(crio-(?:conmon-)?([0-9a-f]{12,64}))")},
      {"podman", std::regex(R"(libpod-(?:conmon-)?([0-9a-f]{12,64}))")},
      {"docker", std::regex(R"(docker[-/]([0-9a-f]{12,64}))")},
      {"containerd", std::regex(R"(containerd[-/]([0-9a-f]{12,64}))")},
      // cgroupfs-driver pods: ".../pod<uid>/<64 hex>" (runtime unknown).
      {"container", std::regex(R"(/pod[0-9a-f_-]{36}/([0-9a-f]{64}))")},
      {"lxc", std::regex(R"((?:^|/)lxc(?:\.payload)?[./]([A-Za-z0-9_.-]+))")},
  };
  for (const auto& p : patterns) {
    if (std::regex_search(path, m, p.re)) {
      r.runtime = p.runtime;
      r.id = m[1].str().substr(
          0, std::string(p.runtime) == "lxc" ? m[1].length() : kShortIdLength);
      break;
    }
  }
  return r;
}

}  // namespace gd
