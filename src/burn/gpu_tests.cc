#include "burn/gpu_tests.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <set>

#include "burn/kernels.h"

namespace gd::burn {

namespace {

using cuda::DeviceMemory;
using cuda::Event;
using cuda::PinnedMemory;

// One launch should take about this long: long enough that launch overhead
// is noise, short enough that Ctrl-C and the deadline are answered quickly.
constexpr double kTargetLaunchMs = 150;
// Memtest: the most bad addresses kept apart, and the device-side log size.
constexpr size_t kMaxTrackedBad = 4096;
constexpr uint32_t kLogCap = 256;
constexpr size_t kMaxChunk = size_t{1} << 30;
constexpr size_t kMinChunk = size_t{1} << 20;
// Copy test: the block moved each way per round. The first round trip is
// compared whole; then each round compares one of kVerifySlices slices in
// turn (all of the block every kVerifySlices rounds): comparing everything
// every round would cost the host a core per GPU at link speed.
constexpr size_t kMaxCopyBlock = size_t{256} << 20;
constexpr size_t kVerifySlices = 64;
// A round (both directions) should take about this long, however small the
// block: each round costs the host a few calls and a wake-up.
constexpr double kTargetRoundMs = 40;
constexpr size_t kMaxFirstErrors = 8;

double seconds_until(Clock::time_point t) {
  return std::chrono::duration<double>(t - Clock::now()).count();
}

}  // namespace

FmaReference FmaReference::make() {
  FmaReference r;
  r.seeds32 = fma_seeds_f32(kSeeds);
  r.seeds64 = fma_seeds_f64(kSeeds);
  for (int k = 0; k < kSeeds; ++k) {
    r.bits32.push_back(fma_f32_round_bits(r.seeds32[k], kIters));
    r.bits64.push_back(fma_f64_round_bits(r.seeds64[k], kIters));
  }
  return r;
}

GpuLive LiveSlot::get() const {
  std::lock_guard<std::mutex> lock(mu_);
  return live_;
}

void LiveSlot::beat(double next_wait_s) {
  std::lock_guard<std::mutex> lock(mu_);
  beat_ = Clock::now();
  expected_wait_s_ = next_wait_s;
}

std::pair<double, double> LiveSlot::since_beat() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {std::chrono::duration<double>(Clock::now() - beat_).count(),
          expected_wait_s_};
}

GpuTests::GpuTests(const cuda::CudaLibrary& lib,
                   const cuda::DeviceFacts& device,
                   const FmaReference& reference, const std::atomic<bool>& stop,
                   LiveSlot& live)
    : lib_(lib), device_(device), ref_(reference), stop_(stop), live_(live) {
  const unsigned per_sm =
      device.max_threads_per_sm > 0 ? device.max_threads_per_sm : 2048;
  grid_ = device.sm_count > 0 ? device.sm_count * per_sm / kBlock : 1024;
  if (grid_ == 0) grid_ = 1;
  ctx_ = std::make_unique<cuda::Context>(lib, device.ordinal);
  module_ = std::make_unique<cuda::Module>(lib, kernels_ptx());
  stream_ = std::make_unique<cuda::Stream>(lib);
}

GpuTests::~GpuTests() = default;

bool GpuTests::stopped(Clock::time_point deadline) const {
  return stop_.load() || Clock::now() >= deadline;
}

// ---- compute
// -----------------------------------------------------------------

template <typename Bits>
void GpuTests::fma_phase(bool fp64, Clock::time_point deadline,
                         ComputeResult& out) {
  const char* name = fp64 ? kFmaF64 : kFmaF32;
  live_.update(
      [&](GpuLive& l) { l.phase = fp64 ? "compute FP64" : "compute FP32"; });
  CUfunction kernel = module_->function(name);
  const size_t threads = size_t{grid_} * kBlock;
  const size_t seed_bytes =
      FmaReference::kSeeds * (fp64 ? sizeof(double) : sizeof(float));
  DeviceMemory seeds(lib_, seed_bytes);
  GD_CU(lib_, cuMemcpyHtoD_v2, seeds.get(),
        fp64 ? static_cast<const void*>(ref_.seeds64.data())
             : ref_.seeds32.data(),
        seed_bytes);
  struct Slot {
    DeviceMemory out;
    PinnedMemory host;
    Event start, end, copied;
    int rounds = 0;
  };
  std::vector<std::unique_ptr<Slot>> slots;
  for (int i = 0; i < 2; ++i)
    slots.push_back(std::unique_ptr<Slot>(
        new Slot{DeviceMemory(lib_, threads * sizeof(Bits)),
                 PinnedMemory(lib_, threads * sizeof(Bits)), Event(lib_),
                 Event(lib_), Event(lib_), 0}));
  auto launch_slot = [&](int s, int rounds) {
    Slot& slot = *slots[s];
    slot.rounds = rounds;
    slot.start.record(*stream_);
    cuda::launch(lib_, kernel, grid_, kBlock, *stream_, slot.out.get(),
                 seeds.get(), FmaReference::kSeeds, rounds,
                 FmaReference::kIters);
    slot.end.record(*stream_);
    GD_CU(lib_, cuMemcpyDtoHAsync_v2, slot.host.get(), slot.out.get(),
          threads * sizeof(Bits), stream_->get());
    slot.copied.record(*stream_);
  };
  double expected_s = 1;
  // Waits for slot s, checks every thread's result; its GPU milliseconds.
  auto check_slot = [&](int s) {
    Slot& slot = *slots[s];
    slot.copied.synchronize();
    live_.beat(expected_s);
    const double ms = slot.end.ms_since(slot.start);
    const Bits* got = static_cast<const Bits*>(slot.host.get());
    // The expected value of each seed for this launch's round count; thread
    // g used seed g % kSeeds (a power of two: the loop vectorises).
    static_assert((FmaReference::kSeeds & (FmaReference::kSeeds - 1)) == 0);
    Bits want[FmaReference::kSeeds];
    for (size_t k = 0; k < FmaReference::kSeeds; ++k)
      want[k] = static_cast<Bits>(static_cast<Bits>(slot.rounds) *
                                  (fp64 ? ref_.bits64[k] : ref_.bits32[k]));
    size_t bad = 0;
    for (size_t g = 0; g < threads; ++g)
      bad += got[g] != want[g & (FmaReference::kSeeds - 1)];
    uint64_t wrong = bad;
    for (size_t g = 0;
         bad && g < threads && out.first_errors.size() < kMaxFirstErrors; ++g) {
      const Bits w = want[g & (FmaReference::kSeeds - 1)];
      if (got[g] != w)
        out.first_errors.push_back({name, g, uint64_t{w}, uint64_t{got[g]}});
    }
    out.errors += wrong;
    out.checked += threads;
    ++out.launches;
    if (wrong) live_.update([&](GpuLive& l) { l.compute_errors = out.errors; });
    return ms;
  };

  // Calibrate on one round, then size launches to kTargetLaunchMs.
  launch_slot(0, 1);
  const double one_round_ms = std::max(check_slot(0), 1e-3);
  const int rounds =
      static_cast<int>(std::clamp(kTargetLaunchMs / one_round_ms, 1.0, 1e6));
  expected_s = one_round_ms * rounds / 1e3 * 2;
  const double flops_per_launch = fma_flops_per_round(FmaReference::kIters) *
                                  rounds * static_cast<double>(threads);
  double total_ms = 0, total_flops = 0;
  std::deque<int> inflight;
  int next = 0;
  while (true) {
    while (inflight.size() < 2 && !stopped(deadline)) {
      launch_slot(next, rounds);
      inflight.push_back(next);
      next ^= 1;
    }
    if (inflight.empty()) break;
    const int s = inflight.front();
    inflight.pop_front();
    total_ms += check_slot(s);
    total_flops += flops_per_launch;
    const double gflops = total_flops / (total_ms / 1e3) / 1e9;
    live_.update([&](GpuLive& l) { l.gflops = gflops; });
  }
  if (total_ms > 0)
    (fp64 ? out.gflops_fp64 : out.gflops_fp32) =
        total_flops / (total_ms / 1e3) / 1e9;
}

void GpuTests::gemm_phase(Clock::time_point deadline, const Cublas& cublas,
                          ComputeResult& out) {
  live_.update([&](GpuLive& l) { l.phase = "compute GEMM"; });
  size_t free = 0, total = 0;
  GD_CU(lib_, cuMemGetInfo_v2, &free, &total);
  int n = 8192;
  while (n > 512 && 8.0 * n * n > free / 2.0) n /= 2;
  const size_t nn = size_t(n) * n;
  DeviceMemory a(lib_, nn * 2), b(lib_, nn * 2), c(lib_, nn * 4),
      table(lib_, 25 * 4);
  DeviceMemory log(lib_, error_log_words(kLogCap) * 8);
  PinnedMemory host_log(lib_, error_log_words(kLogCap) * 8);
  cuda::launch(lib_, module_->function(kGemmFillF16), grid_, kBlock, *stream_,
               a.get(), uint64_t(n), uint64_t(nn), kGemmACoefR, kGemmACoefC);
  cuda::launch(lib_, module_->function(kGemmFillF16), grid_, kBlock, *stream_,
               b.get(), uint64_t(n), uint64_t(nn), kGemmBCoefR, kGemmBCoefC);
  const auto want = gemm_product_table(uint64_t(n));
  GD_CU(lib_, cuMemcpyHtoD_v2, table.get(),
        static_cast<const void*>(want.data()), 25 * 4);
  GD_CU(lib_, cuMemsetD32_v2, log.get(), 0u, error_log_words(kLogCap) * 2);
  Cublas::Handle h = nullptr;
  if (int rc = cublas.create(&h); rc != 0) {
    out.tensor_note = cublas.name() + ": cublasCreate failed (status " +
                      std::to_string(rc) + ")";
    return;
  }
  cublas.set_stream(h, stream_->get());
  CUfunction check = module_->function(kGemmCheck);
  Event start(lib_), end(lib_), done(lib_);
  double total_ms = 0, total_flops = 0, expected_s = 5;
  while (!stopped(deadline)) {
    start.record(*stream_);
    if (int rc = cublas.gemm_f16_f32(h, n, n, n, a.get(), b.get(), c.get());
        rc != 0) {
      out.tensor_note = cublas.name() + ": cublasGemmEx failed (status " +
                        std::to_string(rc) + ")";
      break;
    }
    end.record(*stream_);
    cuda::launch(lib_, check, grid_, kBlock, *stream_, c.get(), uint64_t(n),
                 uint64_t(nn), table.get(), log.get(), kLogCap);
    GD_CU(lib_, cuMemcpyDtoHAsync_v2, host_log.get(), log.get(),
          error_log_words(kLogCap) * 8, stream_->get());
    done.record(*stream_);
    done.synchronize();
    live_.beat(expected_s);
    const double ms = end.ms_since(start);
    expected_s = std::max(ms / 1e3 * 4, 1.0);
    total_ms += ms;
    total_flops += 2.0 * n * double(n) * n;
    const auto* entries = static_cast<const uint64_t*>(host_log.get());
    out.checked += nn;
    ++out.launches;
    if (entries[0]) {
      out.errors += entries[0];
      for (uint64_t k = 0; k < std::min<uint64_t>(entries[0], kLogCap) &&
                           out.first_errors.size() < kMaxFirstErrors;
           ++k)
        out.first_errors.push_back({"gemm", (entries[1 + 2 * k] - c.get()) / 4,
                                    entries[2 + 2 * k] >> 32,
                                    entries[2 + 2 * k] & 0xffffffffu});
      GD_CU(lib_, cuMemsetD32_v2, log.get(), 0u, error_log_words(kLogCap) * 2);
      live_.update([&](GpuLive& l) { l.compute_errors = out.errors; });
    }
    const double gflops = total_flops / (total_ms / 1e3) / 1e9;
    live_.update([&](GpuLive& l) { l.gflops = gflops; });
  }
  cublas.destroy(h);
  if (total_ms > 0) out.gflops_tensor = total_flops / (total_ms / 1e3) / 1e9;
}

void GpuTests::compute(Clock::time_point deadline, const Cublas* cublas,
                       const std::string& no_cublas, ComputeResult& out) {
  out.ran = true;
  const double span = std::max(seconds_until(deadline), 0.0);
  const auto at = [&](double share) {
    return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(span * share));
  };
  // FP32 carries most of the heat; FP64 and the GEMM get shares of their own
  // so each figure is measured on its own.
  const auto fp32_end = at(cublas ? 0.5 : 0.7);
  const auto fp64_end = at(cublas ? 0.7 : 1.0);
  fma_phase<uint32_t>(false, fp32_end, out);
  if (stop_.load()) return;
  fma_phase<uint64_t>(true, fp64_end, out);
  if (stop_.load()) return;
  if (cublas)
    gemm_phase(deadline, *cublas, out);
  else
    out.tensor_note = no_cublas;
}

// ---- memory
// ------------------------------------------------------------------

void GpuTests::memory(Clock::time_point deadline, double fraction,
                      MemoryResult& out) {
  out.ran = true;
  live_.update([&](GpuLive& l) {
    l.phase = "memory";
    l.gflops.reset();
  });
  size_t free = 0, total = 0;
  GD_CU(lib_, cuMemGetInfo_v2, &free, &total);
  // The error log and its host copy are allocated first, then the chunks.
  DeviceMemory log(lib_, error_log_words(kLogCap) * 8);
  PinnedMemory host_log(lib_, error_log_words(kLogCap) * 8);
  GD_CU(lib_, cuMemsetD32_v2, log.get(), 0u, error_log_words(kLogCap) * 2);
  const size_t target =
      static_cast<size_t>(static_cast<double>(free) * fraction) / 4096 * 4096;
  std::vector<DeviceMemory> chunks;
  size_t have = 0, chunk = kMaxChunk;
  while (have < target && chunk >= kMinChunk) {
    const size_t want = std::min(chunk, target - have);
    try {
      chunks.emplace_back(lib_, want);
    } catch (const cuda::CudaError& e) {
      if (e.code() != CUDA_ERROR_OUT_OF_MEMORY) throw;
      chunk /= 2;  // fragmented or reserved: smaller pieces
      continue;
    }
    have += want;
  }
  out.bytes_tested = have;
  if (chunks.empty()) return;

  struct Step {
    const char* name;
    Pattern mode;
    bool inversions;
  };
  static constexpr Step kSteps[] = {
      {"walking ones", Pattern::walking_ones, false},
      {"walking zeros", Pattern::walking_zeros, false},
      {"moving inversions", Pattern::constant, true},
      {"address in address", Pattern::address, false},
      {"seeded random", Pattern::random, false}};
  static constexpr uint32_t kInversionPatterns[] = {0x00000000u, 0x55555555u,
                                                    0x33333333u, 0x0F0F0F0Fu};
  CUfunction fill = module_->function(kMemFill),
             check = module_->function(kMemCheck),
             invert = module_->function(kMemInvert);
  Event start(lib_), end(lib_), copied(lib_);
  std::set<uint64_t> bad;
  std::set<std::string> done;
  double total_ms = 0, total_bytes = 0, expected_s = 5;
  for (uint64_t pass = 0; !stopped_after(deadline, out.steps > 0); ++pass) {
    for (const Step& step : kSteps) {
      if (stopped_after(deadline, out.steps > 0)) break;
      uint32_t param = 0;
      switch (step.mode) {
        case Pattern::walking_ones:
        case Pattern::walking_zeros:
          param = static_cast<uint32_t>(pass % 32);
          break;
        case Pattern::address:
          param = pass % 2 ? 0xFFFFFFFFu : 0u;
          break;
        case Pattern::random:
          param = static_cast<uint32_t>(0x9E3779B9u * (pass + 1));
          break;
        case Pattern::constant:
          param = kInversionPatterns[pass % 4];
          break;
      }
      double bytes = 0;
      start.record(*stream_);
      for (const auto& c : chunks) {
        const uint64_t n = c.bytes() / 4;
        const uint32_t mode = static_cast<uint32_t>(step.mode);
        cuda::launch(lib_, fill, grid_, kBlock, *stream_, c.get(), n, mode,
                     param);
        if (step.inversions) {
          // Moving inversions: each word checked and flipped, then flipped
          // back.
          cuda::launch(lib_, invert, grid_, kBlock, *stream_, c.get(), n, param,
                       log.get(), kLogCap);
          cuda::launch(lib_, invert, grid_, kBlock, *stream_, c.get(), n,
                       ~param, log.get(), kLogCap);
          bytes += 16.0 * n;
        }
        cuda::launch(lib_, check, grid_, kBlock, *stream_, c.get(), n, mode,
                     param, log.get(), kLogCap);
        bytes += 8.0 * n;
      }
      end.record(*stream_);
      GD_CU(lib_, cuMemcpyDtoHAsync_v2, host_log.get(), log.get(),
            error_log_words(kLogCap) * 8, stream_->get());
      copied.record(*stream_);
      copied.synchronize();
      live_.beat(expected_s);
      const double ms = end.ms_since(start);
      expected_s = std::max(ms / 1e3 * 4, 1.0);
      total_ms += ms;
      total_bytes += bytes;
      ++out.steps;
      done.insert(step.name);
      const auto* entries = static_cast<const uint64_t*>(host_log.get());
      if (entries[0]) {
        out.mismatches += entries[0];
        for (uint64_t k = 0; k < std::min<uint64_t>(entries[0], kLogCap); ++k)
          if (bad.size() < kMaxTrackedBad) bad.insert(entries[1 + 2 * k]);
        GD_CU(lib_, cuMemsetD32_v2, log.get(), 0u,
              error_log_words(kLogCap) * 2);
      }
      const double rate = total_bytes / (total_ms / 1e3);
      live_.update([&](GpuLive& l) {
        l.bytes_per_s = rate;
        l.memory_errors = bad.size();
      });
    }
  }
  for (const Step& s : kSteps)
    if (done.count(s.name)) out.patterns.push_back(s.name);
  out.bad_address_count = bad.size();
  for (uint64_t a : bad) {
    if (out.bad_addresses.size() >= MemoryResult::kMaxBad) break;
    out.bad_addresses.push_back(a);
  }
  if (total_ms > 0) out.bytes_per_s = total_bytes / (total_ms / 1e3);
}

// ---- pcie
// ----------------------------------------------------------------------

void GpuTests::copy(Clock::time_point deadline, CopyResult& out) {
  out.ran = true;
  live_.update([&](GpuLive& l) {
    l.phase = "pcie";
    l.gflops.reset();
    l.bytes_per_s.reset();
  });
  size_t free = 0, total = 0;
  GD_CU(lib_, cuMemGetInfo_v2, &free, &total);
  const size_t block = std::max(
      std::min(kMaxCopyBlock, free / 4) / kMinChunk * kMinChunk, kMinChunk);
  out.block_bytes = block;
  DeviceMemory dev(lib_, block);
  PinnedMemory src(lib_, block), dst(lib_, block);
  // Data that a stuck line or a swapped block cannot reproduce by accident.
  auto* words = static_cast<uint64_t*>(src.get());
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (size_t i = 0; i < block / 8; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    words[i] = x;
  }
  Event e0(lib_), e1(lib_), e2(lib_);
  double h2d_ms = 0, d2h_ms = 0, moved = 0, expected_s = 5;
  const size_t slice = block / kVerifySlices;
  int copies = 1;  // per direction and round, sized to kTargetRoundMs
  for (size_t round = 0; !stopped_after(deadline, round > 0); ++round) {
    // The part compared after this round trip, cleared first so that a copy
    // that did not happen cannot pass.
    const size_t from = round == 0 ? 0 : (round % kVerifySlices) * slice;
    const size_t len = round == 0 ? block : slice;
    std::memset(static_cast<uint8_t*>(dst.get()) + from, 0, len);
    e0.record(*stream_);
    for (int i = 0; i < copies; ++i)
      GD_CU(lib_, cuMemcpyHtoDAsync_v2, dev.get(),
            static_cast<const void*>(src.get()), block, stream_->get());
    e1.record(*stream_);
    for (int i = 0; i < copies; ++i)
      GD_CU(lib_, cuMemcpyDtoHAsync_v2, dst.get(), dev.get(), block,
            stream_->get());
    e2.record(*stream_);
    e2.synchronize();
    live_.beat(expected_s);
    const double up = e1.ms_since(e0), down = e2.ms_since(e1);
    expected_s = std::max((up + down) / 1e3 * 4, 1.0);
    h2d_ms += up;
    d2h_ms += down;
    moved += double(block) * copies;
    out.bytes += 2 * uint64_t{block} * copies;
    if (std::memcmp(static_cast<const uint8_t*>(src.get()) + from,
                    static_cast<const uint8_t*>(dst.get()) + from, len) != 0)
      ++out.mismatches;
    if (round == 0 && up > 0)
      copies = static_cast<int>(
          std::clamp(kTargetRoundMs / 2 / (up / copies), 1.0, 1000.0));
    const double rate = h2d_ms > 0 ? moved / (h2d_ms / 1e3) : 0;
    live_.update([&](GpuLive& l) { l.bytes_per_s = rate; });
  }
  if (h2d_ms > 0) out.h2d_bytes_per_s = moved / (h2d_ms / 1e3);
  if (d2h_ms > 0) out.d2h_bytes_per_s = moved / (d2h_ms / 1e3);
}

}  // namespace gd::burn
