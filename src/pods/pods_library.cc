#include "pods/pods_library.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "pods/pods_limits.h"
#include "pods/pods_plugin_abi.h"

namespace gd::pods {
namespace {

bool is_socket(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

std::vector<std::string> library_candidates() {
  std::vector<std::string> out;
  if (const char* env = std::getenv("GPUDOCTOR_PODS_LIB"); env && *env) {
    out.emplace_back(env);
    return out;
  }
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    auto dir = exe.parent_path();
    out.push_back((dir / ".." / "lib" / "libgpudoctor-pods.so").string());
    out.push_back((dir / "libgpudoctor-pods.so").string());
  }
  out.emplace_back("libgpudoctor-pods.so");
  return out;
}

}  // namespace

PodSockets find_pod_sockets(const std::string& root) {
  PodSockets s;
  std::string pr =
      env_or("GPUDOCTOR_POD_RESOURCES_SOCKET", root + kPodResourcesSocket);
  if (pr != "none" && is_socket(pr)) s.pod_resources = pr;
  if (const char* cri = std::getenv("GPUDOCTOR_CRI_SOCKET"); cri && *cri) {
    if (std::string(cri) != "none" && is_socket(cri)) s.cri = cri;
    return s;
  }
  for (const auto& path : kCriSockets)
    if (is_socket(root + path)) {
      s.cri = root + path;
      break;
    }
  return s;
}

PodsLibrary::PodsLibrary() = default;

PodsLibrary::~PodsLibrary() {
  if (handle_) ::dlclose(handle_);
}

bool PodsLibrary::load() {
  if (tried_) return handle_ != nullptr;
  tried_ = true;
  for (const auto& path : library_candidates()) {
    handle_ = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_) break;
    const char* err = ::dlerror();
    load_error_ = err ? err : "dlopen failed";
  }
  if (!handle_) return false;
  snapshot_ = ::dlsym(handle_, GD_PODS_SNAPSHOT_SYMBOL);
  free_ = ::dlsym(handle_, GD_PODS_FREE_SYMBOL);
  if (!snapshot_ || !free_) {
    load_error_ = "libgpudoctor-pods.so lacks " GD_PODS_SNAPSHOT_SYMBOL;
    ::dlclose(handle_);
    handle_ = nullptr;
    return false;
  }
  load_error_.clear();
  return true;
}

PodSnapshot PodsLibrary::read(const PodSockets& sockets,
                              std::chrono::milliseconds deadline) {
  PodSnapshot none;
  if (!sockets.any()) return none;
  if (!load()) {
    none.kubelet_error = none.runtime_error =
        "cannot load libgpudoctor-pods.so: " + load_error_;
    return none;
  }
  auto snapshot = reinterpret_cast<gd_pods_snapshot_fn>(snapshot_);
  auto release = reinterpret_cast<gd_pods_free_fn>(free_);
  char* json = nullptr;
  int rc =
      snapshot(sockets.pod_resources.c_str(), sockets.cri.c_str(),
               static_cast<int>(deadline.count()), kMaxSnapshotBytes, &json);
  if (rc != 0 || !json) {
    none.kubelet_error = none.runtime_error = "the pods' library failed";
    return none;
  }
  PodSnapshot out = parse_pod_snapshot(json);
  release(json);
  return out;
}

}  // namespace gd::pods
