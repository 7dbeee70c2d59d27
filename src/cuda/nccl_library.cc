#include "cuda/nccl_library.h"

#include <dlfcn.h>

namespace gd::cuda {

namespace {

template <typename Fn>
void resolve_symbol(void* handle, const char* name, Fn* out) {
  *out = reinterpret_cast<Fn>(dlsym(handle, name));
}

}  // namespace

NcclError::NcclError(std::string call, ncclResult_t code,
                     const std::string& text)
    : std::runtime_error(call + ": " + text + " (" +
                         std::to_string(static_cast<int>(code)) + ")"),
      code_(code) {}

std::unique_ptr<NcclLibrary> NcclLibrary::open(const std::string& path,
                                               std::string* why) {
  const std::string name = path.empty() ? "libnccl.so.2" : path;
  dlerror();
  void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* error = dlerror();
    if (why)
      *why = "no NCCL (cannot load " + name + ": " +
             (error ? error : "unknown dlopen error") + ")";
    return nullptr;
  }
  std::unique_ptr<NcclLibrary> lib(new NcclLibrary());
  lib->name_ = name;
#define GD_NCCL_RESOLVE(fn_name, params) \
  resolve_symbol(handle, #fn_name, &lib->fn_.fn_name);
  GD_NCCL_FUNCTIONS(GD_NCCL_RESOLVE)
#undef GD_NCCL_RESOLVE
  resolve_symbol(handle, "ncclGetErrorString", &lib->fn_.ncclGetErrorString);
  std::string missing;
#define GD_NCCL_MISSING(fn_name, params) \
  if (!lib->fn_.fn_name)                 \
    missing += (missing.empty() ? "" : ", ") + std::string(#fn_name);
  GD_NCCL_FUNCTIONS(GD_NCCL_MISSING)
#undef GD_NCCL_MISSING
  if (!missing.empty()) {
    if (why) *why = "no NCCL (" + name + " lacks " + missing + ")";
    return nullptr;
  }
  return lib;
}

std::string NcclLibrary::version() const {
  int code = 0;
  if (fn_.ncclGetVersion(&code) != ncclSuccess) return "";
  return nccl_version_text(code);
}

void NcclLibrary::check(ncclResult_t rc, const char* call) const {
  if (rc == ncclSuccess) return;
  const char* text =
      fn_.ncclGetErrorString ? fn_.ncclGetErrorString(rc) : nullptr;
  throw NcclError(call, rc, text && *text ? text : "NCCL error");
}

std::string nccl_version_text(int code) {
  if (code <= 0) return "";
  // NCCL_VERSION(X, Y, Z): X*1000 + Y*100 + Z up to 2.8, X*10000 + Y*100 + Z
  // from 2.9 on (minor versions above 9 needed the wider field).
  const bool wide = code >= 10000;
  const int major = wide ? code / 10000 : code / 1000;
  const int minor = wide ? (code % 10000) / 100 : (code % 1000) / 100;
  const int patch = code % 100;
  return std::to_string(major) + "." + std::to_string(minor) + "." +
         std::to_string(patch);
}

}  // namespace gd::cuda
