// What the tests on one GPU found (GPU side; the NVML side is watch.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cuda/cuda_objects.h"

namespace gd::burn {

struct ComputeMismatch {
  std::string kernel;   // gd_fma_f32, gd_fma_f64, gemm
  uint64_t thread = 0;  // thread (or element) index
  uint64_t expected = 0, found = 0;
};

struct ComputeResult {
  bool ran = false;
  std::optional<double> gflops_fp32, gflops_fp64, gflops_tensor;
  uint64_t errors = 0;   // wrong results (threads, or GEMM elements)
  uint64_t checked = 0;  // results compared
  uint64_t launches = 0;
  std::string tensor_note;  // why the tensor-core GEMM did not run ("" ran)
  std::vector<ComputeMismatch> first_errors;  // the first few
};

struct MemoryResult {
  bool ran = false;
  uint64_t bytes_tested = 0;            // memory allocated and covered
  uint64_t steps = 0;                   // pattern steps over all of it
  std::vector<std::string> patterns;    // names of the patterns completed
  std::optional<double> bytes_per_s;    // read + written per second
  uint64_t mismatches = 0;              // every wrong read
  std::vector<uint64_t> bad_addresses;  // distinct, ascending (at most kMaxBad)
  uint64_t bad_address_count = 0;       // distinct (exact up to kMaxTracked)
  static constexpr size_t kMaxBad = 64;
};

struct CopyResult {
  bool ran = false;
  std::optional<double> h2d_bytes_per_s, d2h_bytes_per_s;
  uint64_t block_bytes = 0;
  uint64_t bytes = 0;       // moved, both directions
  uint64_t mismatches = 0;  // round trips whose data came back different
};

// The all-reduce across the node's GPUs through NCCL (burn --collective):
// nccl-tests' figures. algbw = bytes / time; busbw = algbw x 2(n-1)/n, what
// each GPU's links carried, comparable across GPU counts.
struct CollectiveResult {
  bool asked = false;
  bool ran = false;
  std::string skipped;      // why it did not run ("" ran or not asked)
  std::string nccl;         // "libnccl.so.2 2.21.5"
  std::vector<int> gpus;    // NVML indices, one rank each
  std::string left_out;     // "GPU 3 failed its own tests" ("" none)
  uint64_t bytes = 0;       // per rank, float32 elements x 4
  uint64_t iterations = 0;  // timed (after the warm-up)
  std::optional<double> seconds_per_iteration;
  std::optional<double> algbw_bytes_per_s, busbw_bytes_per_s;
  bool loopback = false;  // one GPU: no link crossed, algbw is a local copy
  uint64_t checked = 0;   // result elements compared
  uint64_t wrong = 0;     // that differed from the expected sum
  std::vector<std::pair<int, uint64_t>> wrong_by_gpu;  // NVML index, count
  std::string error;     // the NCCL or CUDA error that stopped it
  bool hung = false;     // did not finish (watchdog)
  std::string link;      // "NVLink", "PCIe" or "" unknown
  std::string nccl_env;  // NCCL_* variables set for this run that steer it
};

// Live state of one GPU's tests, for the live view.
struct GpuLive {
  std::string phase =
      "setup";  // setup | compute FP32 | compute FP64 |
                // compute GEMM | memory | pcie | done | failed | hung
  std::optional<double> gflops;       // last compute figure
  std::optional<double> bytes_per_s;  // last memory or copy figure
  uint64_t compute_errors = 0, memory_errors = 0;
  std::string error;
};

struct GpuRunResult {
  bool ran = false;              // set up (context, module) and started
  std::string fatal_error;       // the CUDA error that ended this GPU's run
  std::string fatal_error_name;  // CUDA_ERROR_...
  std::string fatal_phase;
  double fatal_at_s = 0;  // seconds into the run
  bool hung = false;      // stopped answering (watchdog)
  std::string hung_phase;
  double ran_s = 0;
  ComputeResult compute;
  MemoryResult memory;
  CopyResult copy;
};

}  // namespace gd::burn
