// The system's cuBLAS, when there is one, for a tensor-core GEMM (as gpu-burn
// does): libcublas.so.13/.12/.11 loaded with dlopen, never linked. cuBLAS uses
// the CUDA context current on the calling thread (the driver API's).
#pragma once

#include <memory>
#include <string>

#include "cuda/cuda_api.h"

namespace gd::burn {

class Cublas {
 public:
  // `path` "" tries the versioned names in turn, "none" loads nothing. nullptr
  // when none loads or one lacks a function burn needs; *why says which.
  static std::unique_ptr<Cublas> open(const std::string& path,
                                      std::string* why);
  ~Cublas();
  const std::string& name() const { return name_; }

  using Handle = void*;
  // cuBLAS status codes: 0 is success.
  int create(Handle* h) const;
  int destroy(Handle h) const;
  int set_stream(Handle h, CUstream s) const;
  // C (m x n, FP32) = A (m x k, FP16) x B (k x n, FP16), column-major, FP32
  // accumulation: tensor cores where the GPU has them.
  int gemm_f16_f32(Handle h, int m, int n, int k, CUdeviceptr a, CUdeviceptr b,
                   CUdeviceptr c) const;

 private:
  Cublas() = default;
  void* handle_ = nullptr;
  std::string name_;
  int (*create_)(Handle*) = nullptr;
  int (*destroy_)(Handle) = nullptr;
  int (*set_stream_)(Handle, CUstream) = nullptr;
  int (*set_math_mode_)(Handle, int) = nullptr;
  int (*gemm_ex_)(Handle, int, int, int, int, int, const void*, const void*,
                  int, int, const void*, int, int, const void*, void*, int, int,
                  int, int) = nullptr;
};

}  // namespace gd::burn
