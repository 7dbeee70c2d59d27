#include "nvml/nvml_library.h"

#include <dlfcn.h>
#include <link.h>

#include <climits>
#include <cstdlib>

#include "common/phase_timing.h"
#include "model/sample.h"

namespace gd::nvml {

namespace {

template <typename Fn>
void resolve(void* handle, const char* name,
             const std::set<std::string>& hidden, Fn* out) {
  if (hidden.count(name)) return;
  // dlsym returns void*; POSIX guarantees it converts to a function pointer.
  *out = reinterpret_cast<Fn>(dlsym(handle, name));
}

// The real file behind a dlopen handle: its link-map name with symlinks
// resolved (libnvidia-ml.so.1 -> libnvidia-ml.so.535.104.05).
std::string loaded_file(void* handle) {
  struct link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || !map || !map->l_name)
    return "";
  char real[PATH_MAX];
  if (!realpath(map->l_name, real)) return map->l_name;
  return real;
}

}  // namespace

std::string library_version_from_file_name(const std::string& path) {
  static constexpr std::string_view kPrefix = "libnvidia-ml.so.";
  const size_t slash = path.rfind('/');
  std::string_view name(path);
  if (slash != std::string::npos) name.remove_prefix(slash + 1);
  if (!name.starts_with(kPrefix)) return "";
  std::string_view version = name.substr(kPrefix.size());
  // Only a driver version (digits and at least one dot) counts: ".so.1" is
  // the ABI number every driver's library shares.
  if (version.find('.') == std::string_view::npos) return "";
  for (char c : version) {
    if (c != '.' && (c < '0' || c > '9')) return "";
  }
  return std::string(version);
}

std::unique_ptr<NvmlLibrary> NvmlLibrary::open(
    const std::string& path, std::string* error,
    const std::set<std::string>& hidden) {
  dlerror();  // clear any stale message
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    if (error) {
      *error = "cannot load " + path + " (the NVIDIA driver's NVML library): " +
               (why ? why : "unknown dlopen error");
    }
    return nullptr;
  }
  std::unique_ptr<NvmlLibrary> lib(new NvmlLibrary());
  lib->handle_ = handle;
  lib->library_version_ = library_version_from_file_name(loaded_file(handle));
#define GD_NVML_RESOLVE(name, params) \
  resolve(handle, #name, hidden, &lib->fn_.name);
  GD_NVML_FUNCTIONS(GD_NVML_RESOLVE)
#undef GD_NVML_RESOLVE
  resolve(handle, "nvmlErrorString", hidden, &lib->fn_.nvmlErrorString);
  return lib;
}

NvmlLibrary::~NvmlLibrary() {
  if (leaked_) return;
  note_phase("nvml: nvmlShutdown");
  if (initialised_ && fn_.nvmlShutdown) fn_.nvmlShutdown();
  note_phase("nvml: dlclose");
  if (handle_) dlclose(handle_);
  note_phase("nvml: unloaded");
}

const char* init_status_for(nvmlReturn_t code) {
  switch (code) {
    case NVML_SUCCESS:
      return kNvmlOk;
    case NVML_ERROR_LIBRARY_NOT_FOUND:
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return kNvmlNoDriver;
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
      return kNvmlDriverMismatch;
    case NVML_ERROR_NO_PERMISSION:
      return kNvmlNoPermission;
    default:
      return kNvmlError;
  }
}

InitOutcome NvmlLibrary::init() {
  if (!fn_.nvmlInit_v2 && !fn_.nvmlInit) {
    return {kNvmlError,
            "the NVML library exports neither nvmlInit_v2 nor nvmlInit"};
  }
  nvmlReturn_t rc = NVML_ERROR_FUNCTION_NOT_FOUND;
  note_phase("nvml: loaded, nvmlInit");
  if (fn_.nvmlInit_v2) rc = fn_.nvmlInit_v2();
  if (rc == NVML_ERROR_FUNCTION_NOT_FOUND && fn_.nvmlInit) rc = fn_.nvmlInit();
  if (rc == NVML_SUCCESS) {
    initialised_ = true;
    return {kNvmlOk, ""};
  }
  return {init_status_for(rc), "nvmlInit failed: " + error_string(rc)};
}

std::string NvmlLibrary::error_string(nvmlReturn_t code) const {
  if (fn_.nvmlErrorString) {
    if (const char* s = fn_.nvmlErrorString(code); s && *s) return s;
  }
  return "NVML error " + std::to_string(static_cast<int>(code));
}

}  // namespace gd::nvml
