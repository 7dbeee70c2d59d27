// libcuda.so.1 (the CUDA driver API) loaded with dlopen: a table of the
// functions the project uses (cuda_api.h), resolved one by one with dlsym,
// so that a symbol an older driver lacks leaves only that entry empty and the
// binary builds and runs on machines without a driver.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda/cuda_api.h"

namespace gd::cuda {

// One pointer per function of GD_CUDA_FUNCTIONS, nullptr when the library
// does not export it.
struct CudaFunctions {
#define GD_CUDA_FN_MEMBER(name, params) name##_fn name = nullptr;
  GD_CUDA_FUNCTIONS(GD_CUDA_FN_MEMBER)
#undef GD_CUDA_FN_MEMBER
};

// A driver call that failed: which call, its CUresult and the driver's name
// for it ("cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY (out of memory)").
class CudaError : public std::runtime_error {
 public:
  CudaError(std::string call, CUresult code, std::string name,
            const std::string& text);
  const std::string& call() const { return call_; }
  CUresult code() const { return code_; }
  const std::string& name() const { return name_; }  // CUDA_ERROR_...

 private:
  std::string call_;
  CUresult code_;
  std::string name_;
};

class CudaLibrary {
 public:
  // dlopen(path, RTLD_NOW | RTLD_LOCAL). On failure returns nullptr and sets
  // *error to a message naming the path and dlerror().
  static std::unique_ptr<CudaLibrary> open(const std::string& path,
                                           std::string* error);
  // Never dlcloses: after cuInit the driver owns threads and state that
  // outlive any client object (a thread may even be stuck in a hung GPU),
  // and unloading code under them crashes the process or, under a leak
  // checker, reports the driver's own allocations as lost.
  ~CudaLibrary() = default;
  CudaLibrary(const CudaLibrary&) = delete;
  CudaLibrary& operator=(const CudaLibrary&) = delete;

  const CudaFunctions& fn() const { return fn_; }

  // The functions of GD_CUDA_FUNCTIONS the library does not export.
  std::vector<std::string> missing() const;

  // "CUDA_ERROR_OUT_OF_MEMORY" (cuGetErrorName), or "CUDA error 2" when the
  // library does not know the code.
  std::string error_name(CUresult code) const;
  // cuGetErrorString's sentence, "" when there is none.
  std::string error_string(CUresult code) const;

  // Throws CudaError when rc is not CUDA_SUCCESS.
  void check(CUresult rc, const char* call) const;

  // Calls `fn` (an entry of fn()) and throws CudaError when it fails or the
  // library does not export it. Use through GD_CU below.
  template <typename Fn, typename... Args>
  void call(Fn fn, const char* name, Args... args) const {
    if (!fn) throw_missing(name);
    check(fn(args...), name);
  }
  [[noreturn]] static void throw_missing(const char* name);

 private:
  CudaLibrary() = default;
  CudaFunctions fn_;
};

// GD_CU(lib, cuMemAlloc_v2, &ptr, bytes): the call, checked.
#define GD_CU(lib, name, ...) (lib).call((lib).fn().name, #name, __VA_ARGS__)
#define GD_CU0(lib, name) (lib).call((lib).fn().name, #name)

// cuDriverGetVersion's number as text: 12020 -> "12.2".
std::string driver_version_text(int version);

}  // namespace gd::cuda
