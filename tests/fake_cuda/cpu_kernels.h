// The fake's GPU: each kernel of gpudoctor burn's PTX module, by name, as a
// CPU function that computes the same results (written from the kernels'
// spec in src/burn/kernels/burn_kernels.ll, independently of burn's own
// reference code), and the work it did, which the fake's clock turns into
// GPU time. A kernel the fake has no CPU version of cannot be launched
// (CUDA_ERROR_NOT_SUPPORTED, and a line on stderr).
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>
#include <vector>

namespace fake_cuda {

// Device memory as kernels see it: the host bytes behind [ptr, ptr+bytes),
// or nullptr when that range is not inside one allocation (an illegal
// address).
class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  virtual uint8_t* map(uint64_t ptr, uint64_t bytes) = 0;
};

struct KernelWork {
  int rc = 0;  // CUresult: 0, or CUDA_ERROR_ILLEGAL_ADDRESS / INVALID_VALUE
  double fp32_flops = 0, fp64_flops = 0;
  double mem_bytes = 0;  // device memory read + written
};

// Per-GPU knobs of a launch (faults).
struct KernelFaults {
  std::atomic<int>* compute_errors_left = nullptr;  // wrong FMA results to make
};

struct CpuKernel {
  const char* name;
  std::vector<const char*> params;  // PTX parameter types, in order
  KernelWork (*run)(DeviceMemory& mem, uint64_t threads, const uint64_t* args,
                    const KernelFaults& faults);
};

// nullptr when the fake has no CPU version of `name`.
const CpuKernel* find_kernel(std::string_view name);
const std::vector<CpuKernel>& cpu_kernels();

}  // namespace fake_cuda
