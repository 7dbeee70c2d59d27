// FAKE_CUDA_FAULTS: stuck bits, a slow GPU, a sticky ECC error, wrong
// results, a hung GPU, each on the NVML GPU it names (found by bus id).
#include <chrono>
#include <set>
#include <thread>

#include "burn/kernels.h"
#include "client_fixture.h"

namespace fake_cuda_test {
namespace {

using namespace gd::cuda;
namespace burn = gd::burn;

// The CUDA ordinal of the scenario's NVML GPU `nvml` (fastest first: the
// H100s, NVML 2 and 3, are CUDA 0 and 1).
int ordinal_of(int nvml) { return (nvml + 2) % 4; }

FakeCuda with_faults(const std::string& faults) {
  return FakeCuda({{"FAKE_CUDA_SCENARIO", FAKE_NVML_SCENARIO_4GPU},
                   {"FAKE_CUDA_FAULTS", faults}});
}

TEST(FakeCudaFaults, BitflipsAreStuckBitsAtFixedAddresses) {
  auto cuda = with_faults(R"([{"gpu": 1, "bitflips": 3}])");
  ASSERT_EQ(cuda.fn().cuInit(0), CUDA_SUCCESS);
  Context ctx(cuda.lib(), ordinal_of(1));
  Module m(cuda.lib(), burn::kernels_ptx());
  Stream s(cuda.lib());
  size_t free = 0, total = 0;
  ASSERT_EQ(cuda.fn().cuMemGetInfo_v2(&free, &total), CUDA_SUCCESS);
  const uint32_t cap = 16;
  DeviceMemory log(cuda.lib(), burn::error_log_words(cap) * 8);
  DeviceMemory buf(cuda.lib(), free - (1 << 20));
  const uint64_t n = buf.bytes() / 4;
  std::set<uint64_t> bad;
  for (uint32_t pattern : {0u, 0xFFFFFFFFu}) {
    ASSERT_EQ(
        cuda.fn().cuMemsetD32_v2(log.get(), 0, burn::error_log_words(cap) * 2),
        CUDA_SUCCESS);
    launch(cuda.lib(), m.function(burn::kMemFill), 64, 256, s, buf.get(), n, 0u,
           pattern);
    launch(cuda.lib(), m.function(burn::kMemCheck), 64, 256, s, buf.get(), n,
           0u, pattern, log.get(), cap);
    s.synchronize();
    std::vector<uint64_t> entries(burn::error_log_words(cap));
    ASSERT_EQ(cuda.fn().cuMemcpyDtoH_v2(entries.data(), log.get(),
                                        entries.size() * 8),
              CUDA_SUCCESS);
    for (uint64_t k = 0; k < entries[0]; ++k) bad.insert(entries[1 + 2 * k]);
  }
  // Bits 0 and 2 stuck at 1 show against zeros, bit 1 stuck at 0 against ones.
  const uint64_t base = 0x7f0000000000ull + 0x10000000000ull * ordinal_of(1);
  const uint64_t mem = 64u << 20;
  EXPECT_EQ(bad, (std::set<uint64_t>{base + mem / 4, base + mem / 4 * 2,
                                     base + mem / 4 * 3}));
}

TEST(FakeCudaFaults, ASlowGpuTakesLongerInItsEvents) {
  auto cuda = with_faults(R"([{"gpu": 0, "speed": 0.5}])");
  ASSERT_EQ(cuda.fn().cuInit(0), CUDA_SUCCESS);
  auto time_fma = [&](int ordinal) {
    Context ctx(cuda.lib(), ordinal);
    Module m(cuda.lib(), burn::kernels_ptx());
    Stream s(cuda.lib());
    DeviceMemory out(cuda.lib(), 108 * 2048 * 4), seeds(cuda.lib(), 4 * 4);
    auto host_seeds = burn::fma_seeds_f32(4);
    EXPECT_EQ(cuda.fn().cuMemcpyHtoD_v2(seeds.get(), host_seeds.data(), 16),
              CUDA_SUCCESS);
    Event a(cuda.lib()), b(cuda.lib());
    a.record(s);
    launch(cuda.lib(), m.function(burn::kFmaF32), 108 * 8, 256, s, out.get(),
           seeds.get(), 4, 40, 64);
    b.record(s);
    b.synchronize();
    return b.ms_since(a);
  };
  // Both A100s; ~20 ms of modelled work at full speed.
  const double slow = time_fma(ordinal_of(0)), normal = time_fma(ordinal_of(1));
  EXPECT_NEAR(slow / normal, 2.0, 0.1) << slow << " vs " << normal;
}

TEST(FakeCudaFaults, AnInjectedErrorIsStickyFromItsTimeOn) {
  auto cuda = with_faults(
      R"([{"gpu": 3, "error": "CUDA_ERROR_ECC_UNCORRECTABLE", "after_s": 0.3}])");
  ASSERT_EQ(cuda.fn().cuInit(0), CUDA_SUCCESS);
  Context ctx(cuda.lib(), ordinal_of(3));
  Module m(cuda.lib(), burn::kernels_ptx());
  Stream s(cuda.lib());
  DeviceMemory buf(cuda.lib(), 4096);
  launch(cuda.lib(), m.function(burn::kMemFill), 1, 256, s, buf.get(),
         uint64_t{1024}, 0u, 0u);
  EXPECT_EQ(cuda.fn().cuStreamSynchronize(s.get()), CUDA_SUCCESS);
  std::this_thread::sleep_for(std::chrono::milliseconds(350));
  launch(cuda.lib(), m.function(burn::kMemFill), 1, 256, s, buf.get(),
         uint64_t{1024}, 0u, 0u);
  EXPECT_EQ(cuda.fn().cuStreamSynchronize(s.get()),
            CUDA_ERROR_ECC_UNCORRECTABLE);
  CUdeviceptr p;
  EXPECT_EQ(cuda.fn().cuMemAlloc_v2(&p, 64), CUDA_ERROR_ECC_UNCORRECTABLE);
  // Other GPUs are unaffected.
  Context other(cuda.lib(), ordinal_of(2));
  EXPECT_EQ(cuda.fn().cuMemAlloc_v2(&p, 64), CUDA_SUCCESS);
  EXPECT_EQ(cuda.fn().cuMemFree_v2(p), CUDA_SUCCESS);
}

TEST(FakeCudaFaults, ComputeErrorsAreThatManyWrongResults) {
  auto cuda = with_faults(R"([{"gpu": 0, "compute_errors": 5}])");
  ASSERT_EQ(cuda.fn().cuInit(0), CUDA_SUCCESS);
  Context ctx(cuda.lib(), ordinal_of(0));
  Module m(cuda.lib(), burn::kernels_ptx());
  Stream s(cuda.lib());
  const int nseeds = 8, threads = 512;
  DeviceMemory out(cuda.lib(), threads * 4), seeds(cuda.lib(), nseeds * 4);
  auto host_seeds = burn::fma_seeds_f32(nseeds);
  ASSERT_EQ(
      cuda.fn().cuMemcpyHtoD_v2(seeds.get(), host_seeds.data(), nseeds * 4),
      CUDA_SUCCESS);
  int wrong = 0;
  for (int launch_no = 0; launch_no < 3; ++launch_no) {
    launch(cuda.lib(), m.function(burn::kFmaF32), 2, 256, s, out.get(),
           seeds.get(), nseeds, 1, 2);
    s.synchronize();
    std::vector<uint32_t> r(threads);
    ASSERT_EQ(cuda.fn().cuMemcpyDtoH_v2(r.data(), out.get(), threads * 4),
              CUDA_SUCCESS);
    for (int g = 0; g < threads; ++g)
      wrong += r[g] != burn::fma_f32_round_bits(host_seeds[g % nseeds], 2);
  }
  EXPECT_EQ(wrong, 5);
}

TEST(FakeCudaFaults, AHungGpuNeverFinishes) {
  auto cuda = with_faults(R"([{"gpu": 2, "hang_after_s": 0}])");
  ASSERT_EQ(cuda.fn().cuInit(0), CUDA_SUCCESS);
  Context ctx(cuda.lib(), ordinal_of(2));
  Stream s(cuda.lib());
  Event e(cuda.lib());
  e.record(s);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(e.done());
}

}  // namespace
}  // namespace fake_cuda_test
