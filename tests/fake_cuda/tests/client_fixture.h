// Loads a fresh copy of the fake libcuda.so.1 (a copy in a temporary
// directory: dlopen of the same file would share one instance, and cuInit
// reads the environment once) with the environment a test sets first.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "cuda/cuda_library.h"
#include "cuda/cuda_objects.h"

namespace fake_cuda_test {

class FakeCuda {
 public:
  explicit FakeCuda(const std::map<std::string, std::string>& env = {
                        {"FAKE_CUDA_SCENARIO", FAKE_NVML_SCENARIO_4GPU}}) {
    for (const char* name :
         {"FAKE_CUDA_SCENARIO", "FAKE_NVML_SCENARIO", "FAKE_CUDA_FAULTS",
          "FAKE_CUDA_MEMORY_MIB", "CUDA_DEVICE_ORDER", "CUDA_VISIBLE_DEVICES"})
      unsetenv(name);
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    char tmpl[] = "/tmp/fake_cuda_test.XXXXXX";
    dir_ = mkdtemp(tmpl);
    const std::string copy = dir_ + "/libcuda.so.1";
    std::filesystem::copy_file(FAKE_CUDA_LIB, copy);
    std::string error;
    lib_ = gd::cuda::CudaLibrary::open(copy, &error);
    if (!lib_) ADD_FAILURE() << error;
  }
  // The copy stays loaded (CudaLibrary never dlcloses a driver).
  ~FakeCuda() { std::filesystem::remove_all(dir_); }
  const gd::cuda::CudaLibrary& lib() const { return *lib_; }
  const gd::cuda::CudaFunctions& fn() const { return lib_->fn(); }

 private:
  std::string dir_;
  std::unique_ptr<gd::cuda::CudaLibrary> lib_;
};

}  // namespace fake_cuda_test
