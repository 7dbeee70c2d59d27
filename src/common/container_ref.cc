#include "common/container_ref.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <regex>
#include <utility>

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

namespace {

// Each pattern runs only when its literal part is in the path (a match
// needs it), and is compiled at its first use: a process whose cgroup names
// no runtime (a systemd service, a login session) costs a few substring
// searches, not the compilation of every pattern (~0.7 ms, most of what
// `status` spent naming one process's container).
struct RuntimePattern {
  const char* runtime;
  const char* literal;
  const char* re;
};
constexpr RuntimePattern kRuntimePatterns[] = {
    {"containerd", "cri-containerd-", R"(cri-containerd-([0-9a-f]{12,64}))"},
    {"cri-o", "crio-", R"(crio-(?:conmon-)?([0-9a-f]{12,64}))"},
    {"podman", "libpod-", R"(libpod-(?:conmon-)?([0-9a-f]{12,64}))"},
    {"docker", "docker", R"(docker[-/]([0-9a-f]{12,64}))"},
    {"containerd", "containerd", R"(containerd[-/]([0-9a-f]{12,64}))"},
    // cgroupfs-driver pods: ".../pod<uid>/<64 hex>" (runtime unknown).
    {"container", "/pod", R"(/pod[0-9a-f_-]{36}/([0-9a-f]{64}))"},
    {"lxc", "lxc", R"((?:^|/)lxc(?:\.payload)?[./]([A-Za-z0-9_.-]+))"},
};

template <size_t I>
const std::regex& runtime_regex() {
  static const std::regex re(kRuntimePatterns[I].re);
  return re;
}

template <size_t... I>
constexpr auto runtime_regexes(std::index_sequence<I...>) {
  return std::array<const std::regex& (*)(), sizeof...(I)>{
      &runtime_regex<I>...};
}
constexpr auto kRuntimeRegexes =
    runtime_regexes(std::make_index_sequence<std::size(kRuntimePatterns)>());

}  // namespace

ContainerRef container_from_cgroup(const std::string& path) {
  ContainerRef r;
  std::smatch m;
  // Kubernetes: ".../kubepods/burstable/pod<uid>/..." (cgroupfs driver) or
  // ".../kubepods-burstable-pod<uid_with_underscores>.slice/..." (systemd).
  // Guaranteed pods sit directly under kubepods, with no QoS level.
  if (path.find("kubepods") != std::string::npos) {
    static const std::regex pod(
        R"(kubepods.*?pod([0-9a-fA-F]{8}[-_][0-9a-fA-F]{4}[-_][0-9a-fA-F]{4}[-_][0-9a-fA-F]{4}[-_][0-9a-fA-F]{12}))");
    if (std::regex_search(path, m, pod)) {
      r.pod_uid = m[1].str();
      std::replace(r.pod_uid.begin(), r.pod_uid.end(), '_', '-');
      std::string before = m.prefix().str() + m[0].str();
      r.pod_qos = before.find("burstable") != std::string::npos ? "burstable"
                  : before.find("besteffort") != std::string::npos
                      ? "besteffort"
                      : "guaranteed";
    }
  }
  for (size_t i = 0; i < std::size(kRuntimePatterns); ++i) {
    const RuntimePattern& p = kRuntimePatterns[i];
    if (path.find(p.literal) == std::string::npos) continue;
    if (std::regex_search(path, m, kRuntimeRegexes[i]())) {
      r.runtime = p.runtime;
      r.id = m[1].str().substr(
          0, std::string(p.runtime) == "lxc" ? m[1].length() : kShortIdLength);
      break;
    }
  }
  return r;
}

}  // namespace gd
