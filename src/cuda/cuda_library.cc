#include "cuda/cuda_library.h"

#include <dlfcn.h>

namespace gd::cuda {

namespace {

template <typename Fn>
void resolve(void* handle, const char* name, Fn* out) {
  // dlsym returns void*; POSIX guarantees it converts to a function pointer.
  *out = reinterpret_cast<Fn>(dlsym(handle, name));
}

}  // namespace

CudaError::CudaError(std::string call, CUresult code, std::string name,
                     const std::string& text)
    : std::runtime_error(call + ": " + name +
                         (text.empty() ? "" : " (" + text + ")")),
      call_(std::move(call)),
      code_(code),
      name_(std::move(name)) {}

std::unique_ptr<CudaLibrary> CudaLibrary::open(const std::string& path,
                                               std::string* error) {
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    if (error)
      *error = "cannot load " + path + " (the NVIDIA driver's CUDA library): " +
               (why ? why : "unknown dlopen error");
    return nullptr;
  }
  std::unique_ptr<CudaLibrary> lib(new CudaLibrary());
  // `handle` stays open for the process's life (see ~CudaLibrary).
#define GD_CUDA_RESOLVE(name, params) resolve(handle, #name, &lib->fn_.name);
  GD_CUDA_FUNCTIONS(GD_CUDA_RESOLVE)
#undef GD_CUDA_RESOLVE
  return lib;
}

std::vector<std::string> CudaLibrary::missing() const {
  std::vector<std::string> out;
#define GD_CUDA_MISSING(name, params) \
  if (!fn_.name) out.push_back(#name);
  GD_CUDA_FUNCTIONS(GD_CUDA_MISSING)
#undef GD_CUDA_MISSING
  return out;
}

std::string CudaLibrary::error_name(CUresult code) const {
  const char* s = nullptr;
  if (fn_.cuGetErrorName && fn_.cuGetErrorName(code, &s) == CUDA_SUCCESS && s &&
      *s)
    return s;
  return "CUDA error " + std::to_string(static_cast<int>(code));
}

std::string CudaLibrary::error_string(CUresult code) const {
  const char* s = nullptr;
  if (fn_.cuGetErrorString && fn_.cuGetErrorString(code, &s) == CUDA_SUCCESS &&
      s)
    return s;
  return "";
}

void CudaLibrary::check(CUresult rc, const char* call) const {
  if (rc == CUDA_SUCCESS) return;
  throw CudaError(call, rc, error_name(rc), error_string(rc));
}

void CudaLibrary::throw_missing(const char* name) {
  throw CudaError(name, CUDA_ERROR_NOT_SUPPORTED, "not exported",
                  "the driver library has no " + std::string(name));
}

std::string driver_version_text(int version) {
  if (version <= 0) return "";
  return std::to_string(version / 1000) + "." +
         std::to_string((version % 1000) / 10);
}

}  // namespace gd::cuda
