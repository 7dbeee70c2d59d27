#include "burn/cublas.h"

#include <dlfcn.h>

namespace gd::burn {

namespace {

// cuBLAS API values (cublas_api.h, library_types.h).
constexpr int kOpN = 0;           // CUBLAS_OP_N
constexpr int kR16F = 2;          // CUDA_R_16F
constexpr int kR32F = 0;          // CUDA_R_32F
constexpr int kCompute32F = 68;   // CUBLAS_COMPUTE_32F
constexpr int kGemmDefault = -1;  // CUBLAS_GEMM_DEFAULT
constexpr int kDefaultMath = 0;   // CUBLAS_DEFAULT_MATH (tensor cores for FP16)

template <typename Fn>
bool resolve(void* h, const char* name, Fn* out) {
  *out = reinterpret_cast<Fn>(dlsym(h, name));
  return *out != nullptr;
}

}  // namespace

std::unique_ptr<Cublas> Cublas::open(const std::string& path,
                                     std::string* why) {
  if (path == "none") {
    if (why) *why = "no cuBLAS (--cublas-lib none)";
    return nullptr;
  }
  const char* names[] = {"libcublas.so.13", "libcublas.so.12",
                         "libcublas.so.11"};
  std::unique_ptr<Cublas> lib(new Cublas());
  std::string tried;
  if (!path.empty()) {
    lib->handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    lib->name_ = path;
    tried = path;
  } else {
    for (const char* n : names) {
      lib->handle_ = dlopen(n, RTLD_NOW | RTLD_LOCAL);
      tried += tried.empty() ? n : std::string(", ") + n;
      if (lib->handle_) {
        lib->name_ = n;
        break;
      }
    }
  }
  if (!lib->handle_) {
    if (why) *why = "no cuBLAS (" + tried + " not found)";
    return nullptr;
  }
  const bool ok =
      resolve(lib->handle_, "cublasCreate_v2", &lib->create_) &&
      resolve(lib->handle_, "cublasDestroy_v2", &lib->destroy_) &&
      resolve(lib->handle_, "cublasSetStream_v2", &lib->set_stream_) &&
      resolve(lib->handle_, "cublasSetMathMode", &lib->set_math_mode_) &&
      resolve(lib->handle_, "cublasGemmEx", &lib->gemm_ex_);
  if (!ok) {
    if (why) *why = lib->name_ + " lacks cublasGemmEx or cublasCreate_v2";
    return nullptr;
  }
  return lib;
}

Cublas::~Cublas() {
  // Not unloaded: cuBLAS keeps threads and state for the process's life.
}

int Cublas::create(Handle* h) const {
  int rc = create_(h);
  if (rc == 0) rc = set_math_mode_(*h, kDefaultMath);
  return rc;
}

int Cublas::destroy(Handle h) const { return destroy_(h); }

int Cublas::set_stream(Handle h, CUstream s) const { return set_stream_(h, s); }

int Cublas::gemm_f16_f32(Handle h, int m, int n, int k, CUdeviceptr a,
                         CUdeviceptr b, CUdeviceptr c) const {
  const float alpha = 1.0f, beta = 0.0f;
  return gemm_ex_(
      h, kOpN, kOpN, m, n, k, &alpha, reinterpret_cast<const void*>(a), kR16F,
      m, reinterpret_cast<const void*>(b), kR16F, k, &beta,
      reinterpret_cast<void*>(c), kR32F, m, kCompute32F, kGemmDefault);
}

}  // namespace gd::burn
