// burn's all-reduce test: NCCL's all-reduce across the selected GPUs of the
// node, from one thread (one communicator per GPU, as nccl-tests'
// all_reduce_perf -g N runs), timed on the GPUs by events and checked
// element by element.
#pragma once

#include <atomic>
#include <vector>

#include "burn/gpu_tests.h"
#include "burn/results.h"
#include "cuda/cuda_library.h"
#include "cuda/nccl_library.h"

namespace gd::burn {

struct CollectiveRank {
  int gpu = 0;      // NVML index
  int ordinal = 0;  // CUDA device
};

struct CollectivePlan {
  std::vector<CollectiveRank> ranks;
  // The timed iterations stop here, but never before kMinIterations.
  Clock::time_point deadline;
  uint64_t max_bytes = uint64_t{1} << 30;  // per rank
};

// nccl-tests' defaults: 5 warm-up iterations, 20 timed ones.
inline constexpr int kCollectiveWarmup = 5;
inline constexpr int kCollectiveMinIterations = 20;

// Runs the test on the calling thread with every GPU's primary context (the
// one NCCL's kernels run in). Fills `out` (figures, checked elements);
// throws cuda::CudaError or cuda::NcclError when a call fails: the caller
// records it. `live` beats between batches of iterations (the watchdog's
// sign of life) and carries the running bus bandwidth.
void run_all_reduce(const cuda::CudaLibrary& cu, const cuda::NcclLibrary& nccl,
                    const CollectivePlan& plan, const std::atomic<bool>& stop,
                    LiveSlot& live, CollectiveResult& out);

// nccl-tests' bus bandwidth of an all-reduce over n ranks: what each rank's
// links carried, algbw x 2(n-1)/n. nullopt for one rank.
std::optional<double> all_reduce_bus_bandwidth(double algbw, size_t ranks);

}  // namespace gd::burn
