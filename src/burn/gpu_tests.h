// The tests on one GPU, run on that GPU's own thread with its context
// current: compute (FMA chains FP32/FP64 checked against the CPU reference,
// tensor-core GEMM through cuBLAS when there is one), memory (memtest
// patterns over most of the free memory), pcie (pinned copies each way).
// Each runs until its deadline or `stop`, keeps the GPU busy (the next
// launch is queued before the previous one is checked) and reports progress
// through a LiveSlot.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "burn/cublas.h"
#include "burn/results.h"
#include "cuda/cuda_objects.h"

namespace gd::burn {

using Clock = std::chrono::steady_clock;

// The FMA chains' expected results, computed once for every GPU.
struct FmaReference {
  static constexpr int kIters = 256;  // per round: 32768 FLOPs per thread
  static constexpr int kSeeds = 1024;
  std::vector<float> seeds32;
  std::vector<double> seeds64;
  std::vector<uint32_t> bits32;  // a round's bits per seed
  std::vector<uint64_t> bits64;
  static FmaReference make();
};

// A GPU's live state, shared with the watcher (mutex) and the watchdog.
class LiveSlot {
 public:
  GpuLive get() const;
  template <typename Fn>
  void update(Fn fn) {
    std::lock_guard<std::mutex> lock(mu_);
    fn(live_);
  }
  // The worker is alive: it just finished waiting for the GPU. `next_wait_s`
  // is how long the next wait should take.
  void beat(double next_wait_s = 0);
  // Seconds since the last beat, and the wait expected then.
  std::pair<double, double> since_beat() const;

 private:
  mutable std::mutex mu_;
  GpuLive live_;
  Clock::time_point beat_ = Clock::now();
  double expected_wait_s_ = 0;
};

class GpuTests {
 public:
  // Creates the context (current on this thread) and JIT-loads the kernels.
  GpuTests(const cuda::CudaLibrary& lib, const cuda::DeviceFacts& device,
           const FmaReference& reference, const std::atomic<bool>& stop,
           LiveSlot& live);
  ~GpuTests();

  // `cublas` may be null (the result then says why no GEMM ran).
  void compute(Clock::time_point deadline, const Cublas* cublas,
               const std::string& no_cublas, ComputeResult& out);
  void memory(Clock::time_point deadline, double fraction, MemoryResult& out);
  void copy(Clock::time_point deadline, CopyResult& out);

  // Launch geometry: enough threads to fill every SM.
  unsigned grid() const { return grid_; }
  static constexpr unsigned kBlock = 256;

 private:
  template <typename Bits>
  void fma_phase(bool fp64, Clock::time_point deadline, ComputeResult& out);
  void gemm_phase(Clock::time_point deadline, const Cublas& cublas,
                  ComputeResult& out);
  bool stopped(Clock::time_point deadline) const;
  // A phase measures once even when an earlier one ran past its share (a
  // loaded machine): only a stop ends it before its first figure.
  bool stopped_after(Clock::time_point deadline, bool measured) const {
    return measured ? stopped(deadline) : stop_.load();
  }

  const cuda::CudaLibrary& lib_;
  cuda::DeviceFacts device_;
  const FmaReference& ref_;
  const std::atomic<bool>& stop_;
  LiveSlot& live_;
  unsigned grid_ = 0;
  std::unique_ptr<cuda::Context> ctx_;
  std::unique_ptr<cuda::Module> module_;
  std::unique_ptr<cuda::Stream> stream_;
};

}  // namespace gd::burn
