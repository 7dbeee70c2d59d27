// Faults of the fake libcuda.so.1, from FAKE_CUDA_FAULTS: a JSON list of
// objects, each naming the GPU by its index in the fake NVML scenario (NVML's
// numbering, the one users see; the fake's CUDA ordinals differ):
//   {"gpu": 1, "bitflips": 3}        3 stuck bits at fixed addresses of GPU 1's
//        memory: bit k of the word at (k+1)/(N+1) of the memory, stuck at 1
//        for even k and 0 for odd k, whatever is written there
//   {"gpu": 2, "speed": 0.6}         GPU 2 computes, moves memory and copies at
//        60% of its modelled rate
//   {"gpu": 3, "error": "CUDA_ERROR_ECC_UNCORRECTABLE", "after_s": 2}
//        from 2 s after GPU 3's first context was created, its contexts fail
//        with that error (sticky, as the real driver's are)
//   {"gpu": 0, "compute_errors": 5}  the first 5 thread results of the FMA
//        kernels on GPU 0 come out wrong (bit 0 flipped)
//   {"gpu": 4, "hang_after_s": 3}    from 3 s on, GPU 4 never finishes work
//        (a hung GPU: waits block until the context is destroyed)
//   {"gpu": 5, "op_wall_ms": 300}    each piece of GPU 5's work takes 300 ms
//        more of wall time, its modelled time unchanged (a loaded host: the
//        client's phases run past their share of the run)
// Anything else (an unknown key, a bad value) is an error: cuInit fails with
// CUDA_ERROR_INVALID_VALUE and says why on stderr.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fake_cuda {

struct GpuFaults {
  int bitflips = 0;
  double speed = 1.0;
  std::optional<int> error;  // CUresult value
  double error_after_s = 0;
  int compute_errors = 0;
  std::optional<double> hang_after_s;
  double op_wall_ms = 0;
};

class Faults {
 public:
  // Throws std::runtime_error naming the bad entry.
  static Faults parse(std::string_view json);
  // The faults of NVML GPU `gpu` (all defaults when none).
  GpuFaults for_gpu(int gpu) const;

 private:
  std::vector<std::pair<int, GpuFaults>> gpus_;
};

// "CUDA_ERROR_ECC_UNCORRECTABLE" -> 214; nullopt when unknown.
std::optional<int> error_code_by_name(std::string_view name);
// 214 -> "CUDA_ERROR_ECC_UNCORRECTABLE"; nullptr when unknown.
const char* error_name(int code);
// 214 -> "uncorrectable ECC error encountered"; nullptr when unknown.
const char* error_string(int code);

}  // namespace fake_cuda
