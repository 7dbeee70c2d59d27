// The driver's rules, as any client meets them: contexts per thread, handles
// tied to their context, device addresses that are not host addresses,
// argument checks, asynchronous streams timed by events.
#include <cstring>
#include <thread>
#include <vector>

#include "burn/kernels.h"
#include "client_fixture.h"

namespace fake_cuda_test {
namespace {

using namespace gd::cuda;

TEST(FakeCudaRules, MemoryAndLaunchesNeedACurrentContext) {
  FakeCuda cuda;
  ASSERT_EQ(cuda.fn().cuInit(0), CUDA_SUCCESS);
  CUdeviceptr p = 0;
  EXPECT_EQ(cuda.fn().cuMemAlloc_v2(&p, 1024), CUDA_ERROR_INVALID_CONTEXT);
  size_t free = 0, total = 0;
  EXPECT_EQ(cuda.fn().cuMemGetInfo_v2(&free, &total),
            CUDA_ERROR_INVALID_CONTEXT);
  CUstream s;
  EXPECT_EQ(cuda.fn().cuStreamCreate(&s, 0), CUDA_ERROR_INVALID_CONTEXT);
  {
    Context ctx(cuda.lib(), 0);
    CUcontext current = nullptr;
    EXPECT_EQ(cuda.fn().cuCtxGetCurrent(&current), CUDA_SUCCESS);
    EXPECT_EQ(current, ctx.get());
    // Another thread has no current context until it sets one.
    std::thread([&] {
      CUdeviceptr q = 0;
      EXPECT_EQ(cuda.fn().cuMemAlloc_v2(&q, 1024), CUDA_ERROR_INVALID_CONTEXT);
      EXPECT_EQ(cuda.fn().cuCtxSetCurrent(ctx.get()), CUDA_SUCCESS);
      EXPECT_EQ(cuda.fn().cuMemAlloc_v2(&q, 1024), CUDA_SUCCESS);
      EXPECT_EQ(cuda.fn().cuMemFree_v2(q), CUDA_SUCCESS);
    }).join();
  }
  // Destroyed: no longer current, its handle no longer valid.
  CUcontext current = reinterpret_cast<CUcontext>(1);
  EXPECT_EQ(cuda.fn().cuCtxGetCurrent(&current), CUDA_SUCCESS);
  EXPECT_EQ(current, nullptr);
}

TEST(FakeCudaRules, PrimaryContextsAreOnePerDeviceAndCounted) {
  FakeCuda cuda;
  const CudaFunctions& f = cuda.fn();
  CUcontext a = nullptr, b = nullptr, other = nullptr;
  EXPECT_EQ(f.cuDevicePrimaryCtxRetain(&a, 0), CUDA_ERROR_NOT_INITIALIZED);
  EXPECT_EQ(f.cuDevicePrimaryCtxRelease_v2(0), CUDA_ERROR_NOT_INITIALIZED);
  ASSERT_EQ(f.cuInit(0), CUDA_SUCCESS);
  EXPECT_EQ(f.cuDevicePrimaryCtxRetain(nullptr, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(f.cuDevicePrimaryCtxRetain(&a, 4), CUDA_ERROR_INVALID_DEVICE);
  EXPECT_EQ(f.cuDevicePrimaryCtxRetain(&a, -1), CUDA_ERROR_INVALID_DEVICE);
  EXPECT_EQ(f.cuDevicePrimaryCtxRelease_v2(4), CUDA_ERROR_INVALID_DEVICE);
  EXPECT_EQ(f.cuDevicePrimaryCtxRelease_v2(0), CUDA_ERROR_INVALID_CONTEXT);

  // Memory as another context of the device sees it.
  Context watcher(cuda.lib(), 0);
  auto free_bytes = [&] {
    CUcontext was = nullptr;
    EXPECT_EQ(f.cuCtxGetCurrent(&was), CUDA_SUCCESS);
    EXPECT_EQ(f.cuCtxSetCurrent(watcher.get()), CUDA_SUCCESS);
    size_t free = 0, total = 0;
    EXPECT_EQ(f.cuMemGetInfo_v2(&free, &total), CUDA_SUCCESS);
    EXPECT_EQ(f.cuCtxSetCurrent(was), CUDA_SUCCESS);
    return free;
  };
  ASSERT_EQ(f.cuCtxSetCurrent(nullptr), CUDA_SUCCESS);
  const size_t free0 = free_bytes();

  ASSERT_EQ(f.cuDevicePrimaryCtxRetain(&a, 0), CUDA_SUCCESS);
  ASSERT_EQ(f.cuDevicePrimaryCtxRetain(&b, 0), CUDA_SUCCESS);
  ASSERT_EQ(f.cuDevicePrimaryCtxRetain(&other, 1), CUDA_SUCCESS);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, other);
  EXPECT_NE(a, watcher.get());
  CUcontext current = reinterpret_cast<CUcontext>(1);
  EXPECT_EQ(f.cuCtxGetCurrent(&current), CUDA_SUCCESS);
  EXPECT_EQ(current, nullptr);  // retained, not made current
  // Another thread gets the same one.
  std::thread([&] {
    CUcontext c = nullptr;
    EXPECT_EQ(f.cuDevicePrimaryCtxRetain(&c, 0), CUDA_SUCCESS);
    EXPECT_EQ(c, a);
    EXPECT_EQ(f.cuDevicePrimaryCtxRelease_v2(0), CUDA_SUCCESS);
  }).join();

  // Used like any context once current.
  ASSERT_EQ(f.cuCtxSetCurrent(a), CUDA_SUCCESS);
  CUdeviceptr p = 0;
  ASSERT_EQ(f.cuMemAlloc_v2(&p, 8 << 20), CUDA_SUCCESS);
  CUstream s = nullptr;
  ASSERT_EQ(f.cuStreamCreate(&s, 0), CUDA_SUCCESS);
  std::vector<uint32_t> in(1024, 0xabcdu), out(1024, 0);
  ASSERT_EQ(f.cuMemcpyHtoDAsync_v2(p, in.data(), 4096, s), CUDA_SUCCESS);
  ASSERT_EQ(f.cuMemcpyDtoHAsync_v2(out.data(), p, 4096, s), CUDA_SUCCESS);
  ASSERT_EQ(f.cuStreamSynchronize(s), CUDA_SUCCESS);
  EXPECT_EQ(out, in);
  EXPECT_EQ(free0 - free_bytes(), (8u << 20) + (1u << 20));  // + its reserve
  // Its retainers share it: not the caller's to destroy.
  EXPECT_EQ(f.cuCtxDestroy_v2(a), CUDA_ERROR_INVALID_CONTEXT);

  // The first release leaves it; the last destroys it, and all in it.
  EXPECT_EQ(f.cuDevicePrimaryCtxRelease_v2(0), CUDA_SUCCESS);
  ASSERT_EQ(f.cuStreamSynchronize(s), CUDA_SUCCESS);
  EXPECT_EQ(f.cuDevicePrimaryCtxRelease_v2(0), CUDA_SUCCESS);
  EXPECT_EQ(f.cuCtxGetCurrent(&current), CUDA_SUCCESS);
  EXPECT_EQ(current, nullptr);
  EXPECT_EQ(f.cuCtxSetCurrent(a), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(free_bytes(), free0);
  EXPECT_EQ(f.cuDevicePrimaryCtxRelease_v2(0), CUDA_ERROR_INVALID_CONTEXT);
  ASSERT_EQ(f.cuCtxSetCurrent(watcher.get()), CUDA_SUCCESS);
  EXPECT_EQ(f.cuStreamSynchronize(s), CUDA_ERROR_INVALID_HANDLE);

  // Device 1's is untouched.
  ASSERT_EQ(f.cuCtxSetCurrent(other), CUDA_SUCCESS);
  EXPECT_EQ(f.cuMemAlloc_v2(&p, 4096), CUDA_SUCCESS);
  EXPECT_EQ(f.cuDevicePrimaryCtxRelease_v2(1), CUDA_SUCCESS);
  EXPECT_EQ(f.cuCtxSetCurrent(watcher.get()), CUDA_SUCCESS);
}

TEST(FakeCudaRules, AReleasedPrimaryContextComesBackFresh) {
  FakeCuda cuda;
  const CudaFunctions& f = cuda.fn();
  ASSERT_EQ(f.cuInit(0), CUDA_SUCCESS);
  CUcontext ctx = nullptr;
  ASSERT_EQ(f.cuDevicePrimaryCtxRetain(&ctx, 2), CUDA_SUCCESS);
  ASSERT_EQ(f.cuCtxSetCurrent(ctx), CUDA_SUCCESS);
  {
    Module m(cuda.lib(), gd::burn::kernels_ptx());
    DeviceMemory buf(cuda.lib(), 4096);
    Stream s(cuda.lib());
    launch(cuda.lib(), m.function("gd_mem_fill"), 4, 256, s, buf.get(),
           uint64_t{2048}, 0u, 0u);
    EXPECT_EQ(f.cuStreamSynchronize(s.get()), CUDA_ERROR_ILLEGAL_ADDRESS);
  }
  EXPECT_EQ(f.cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);  // sticky
  EXPECT_EQ(f.cuDevicePrimaryCtxRelease_v2(2), CUDA_SUCCESS);
  // Retained again: a new primary context, without the old one's error.
  ASSERT_EQ(f.cuDevicePrimaryCtxRetain(&ctx, 2), CUDA_SUCCESS);
  ASSERT_EQ(f.cuCtxSetCurrent(ctx), CUDA_SUCCESS);
  EXPECT_EQ(f.cuCtxSynchronize(), CUDA_SUCCESS);
  CUdeviceptr p = 0;
  EXPECT_EQ(f.cuMemAlloc_v2(&p, 4096), CUDA_SUCCESS);
  EXPECT_EQ(f.cuDevicePrimaryCtxRelease_v2(2), CUDA_SUCCESS);
}

TEST(FakeCudaRules, HandlesOfAnotherContextAreRejected) {
  FakeCuda cuda;
  ASSERT_EQ(cuda.fn().cuInit(0), CUDA_SUCCESS);
  Context a(cuda.lib(), 0);
  Stream sa(cuda.lib());
  Event ea(cuda.lib());
  Module ma(cuda.lib(), gd::burn::kernels_ptx());
  CUcontext ctx_b = nullptr;
  ASSERT_EQ(cuda.fn().cuCtxCreate_v2(&ctx_b, 0, 1),
            CUDA_SUCCESS);  // now current
  EXPECT_EQ(cuda.fn().cuEventRecord(ea.get(), nullptr),
            CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuda.fn().cuStreamSynchronize(sa.get()), CUDA_ERROR_INVALID_HANDLE);
  CUfunction f = nullptr;
  EXPECT_EQ(cuda.fn().cuModuleGetFunction(&f, reinterpret_cast<CUmodule>(&f),
                                          "gd_fma_f32"),
            CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuda.fn().cuCtxDestroy_v2(ctx_b), CUDA_SUCCESS);
  EXPECT_EQ(cuda.fn().cuCtxDestroy_v2(ctx_b), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(cuda.fn().cuCtxSetCurrent(a.get()), CUDA_SUCCESS);
  EXPECT_EQ(cuda.fn().cuEventRecord(ea.get(), sa.get()), CUDA_SUCCESS);
}

TEST(FakeCudaRules, DeviceAddressesAreTheirOwnAndMemoryIsAccounted) {
  FakeCuda cuda;
  ASSERT_EQ(cuda.fn().cuInit(0), CUDA_SUCCESS);
  Context ctx(cuda.lib(), 0);
  size_t free0 = 0, total = 0;
  ASSERT_EQ(cuda.fn().cuMemGetInfo_v2(&free0, &total), CUDA_SUCCESS);
  EXPECT_EQ(total, 64u << 20);
  EXPECT_LT(free0, total);  // a context keeps some
  CUdeviceptr p = 0;
  ASSERT_EQ(cuda.fn().cuMemAlloc_v2(&p, 1 << 20), CUDA_SUCCESS);
  EXPECT_GE(p, 0x7f0000000000ull);
  EXPECT_EQ(p % 512, 0u);
  size_t free1 = 0;
  ASSERT_EQ(cuda.fn().cuMemGetInfo_v2(&free1, &total), CUDA_SUCCESS);
  EXPECT_EQ(free0 - free1, 1u << 20);
  CUdeviceptr huge = 0;
  EXPECT_EQ(cuda.fn().cuMemAlloc_v2(&huge, total), CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(cuda.fn().cuMemAlloc_v2(&huge, 0), CUDA_ERROR_INVALID_VALUE);

  std::vector<uint8_t> in(4096), out(4096, 0);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(i * 7);
  ASSERT_EQ(cuda.fn().cuMemcpyHtoD_v2(p + 512, in.data(), in.size()),
            CUDA_SUCCESS);
  ASSERT_EQ(cuda.fn().cuMemcpyDtoH_v2(out.data(), p + 512, out.size()),
            CUDA_SUCCESS);
  EXPECT_EQ(in, out);
  // Past the end of the allocation, or not device memory at all.
  EXPECT_EQ(cuda.fn().cuMemcpyDtoH_v2(out.data(), p + (1 << 20) - 100, 4096),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuda.fn().cuMemcpyHtoD_v2(reinterpret_cast<CUdeviceptr>(in.data()),
                                      in.data(), 16),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuda.fn().cuMemFree_v2(p), CUDA_SUCCESS);
  EXPECT_EQ(cuda.fn().cuMemFree_v2(p), CUDA_ERROR_INVALID_VALUE);
  size_t free2 = 0;
  ASSERT_EQ(cuda.fn().cuMemGetInfo_v2(&free2, &total), CUDA_SUCCESS);
  EXPECT_EQ(free2, free0);
  void* pinned = nullptr;
  ASSERT_EQ(cuda.fn().cuMemHostAlloc(&pinned, 8192, 0), CUDA_SUCCESS);
  EXPECT_EQ(cuda.fn().cuMemFreeHost(pinned), CUDA_SUCCESS);
  EXPECT_EQ(cuda.fn().cuMemFreeHost(pinned), CUDA_ERROR_INVALID_VALUE);
}

TEST(FakeCudaRules, ModulesAreCheckedLikeTheJitChecksThem) {
  FakeCuda cuda;
  ASSERT_EQ(cuda.fn().cuInit(0), CUDA_SUCCESS);
  Context ctx(cuda.lib(), 2);  // an A100
  try {
    Module bad(cuda.lib(), "this is not PTX");
    FAIL();
  } catch (const CudaError& e) {
    EXPECT_EQ(e.name(), "CUDA_ERROR_INVALID_PTX");
    EXPECT_NE(
        std::string(e.what()).find("JIT log: ptxas application ptx input"),
        std::string::npos)
        << e.what();
  }
  std::string too_new = gd::burn::kernels_ptx();
  too_new.replace(too_new.find(".target sm_60"), 13, ".target sm_90");
  EXPECT_THROW(Module(cuda.lib(), too_new), CudaError);
  Module m(cuda.lib(), gd::burn::kernels_ptx());
  CUfunction f = nullptr;
  EXPECT_EQ(cuda.fn().cuModuleGetFunction(&f, reinterpret_cast<CUmodule>(0x1),
                                          "gd_fma_f32"),
            CUDA_ERROR_INVALID_HANDLE);
  for (const auto& name : gd::burn::kernel_names())
    EXPECT_NE(m.function(name.c_str()), nullptr);
  EXPECT_THROW(m.function("gd_no_such_kernel"), CudaError);
}

TEST(FakeCudaRules, LaunchArgumentsAreChecked) {
  FakeCuda cuda;
  ASSERT_EQ(cuda.fn().cuInit(0), CUDA_SUCCESS);
  Context ctx(cuda.lib(), 0);
  Module m(cuda.lib(), gd::burn::kernels_ptx());
  CUfunction fill = m.function("gd_mem_fill");
  DeviceMemory buf(cuda.lib(), 4096);
  CUdeviceptr base = buf.get();
  uint64_t n = 1024;
  uint32_t mode = 0, param = 7;
  void* args[] = {&base, &n, &mode, &param};
  auto launch = [&](unsigned grid, unsigned block, void** params) {
    return cuda.fn().cuLaunchKernel(fill, grid, 1, 1, block, 1, 1, 0, nullptr,
                                    params, nullptr);
  };
  EXPECT_EQ(launch(0, 256, args), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(launch(4, 2048, args), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(launch(4, 256, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(launch(4, 256, args), CUDA_SUCCESS);
  ctx.synchronize();
  std::vector<uint32_t> out(1024);
  ASSERT_EQ(cuda.fn().cuMemcpyDtoH_v2(out.data(), base, 4096), CUDA_SUCCESS);
  EXPECT_EQ(out.front(), 7u);
  EXPECT_EQ(out.back(), 7u);
}

TEST(FakeCudaRules, AnIllegalAddressIsStickyForTheContext) {
  FakeCuda cuda;
  ASSERT_EQ(cuda.fn().cuInit(0), CUDA_SUCCESS);
  Context ctx(cuda.lib(), 0);
  Module m(cuda.lib(), gd::burn::kernels_ptx());
  DeviceMemory buf(cuda.lib(), 4096);
  Stream s(cuda.lib());
  // 2048 words into a 1024-word buffer: the kernel runs off its end.
  launch(cuda.lib(), m.function("gd_mem_fill"), 4, 256, s, buf.get(),
         uint64_t{2048}, 0u, 0u);
  EXPECT_EQ(cuda.fn().cuStreamSynchronize(s.get()), CUDA_ERROR_ILLEGAL_ADDRESS);
  CUdeviceptr p = 0;
  EXPECT_EQ(cuda.fn().cuMemAlloc_v2(&p, 1024), CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT_EQ(cuda.fn().cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
}

TEST(FakeCudaRules, EventsTimeTheModelledGpuAndStreamsRunAsynchronously) {
  FakeCuda cuda;
  ASSERT_EQ(cuda.fn().cuInit(0), CUDA_SUCCESS);
  auto devices = list_devices(cuda.lib());
  Context ctx(cuda.lib(), 2);  // A100: 108 SMs x 64 lanes x 2 x 1410 MHz x 0.95
  Module m(cuda.lib(), gd::burn::kernels_ptx());
  const int nseeds = 64, iters = 64, rounds = 100;
  const unsigned grid = 108 * 8, block = 256;
  DeviceMemory out(cuda.lib(), size_t{grid} * block * 4),
      seeds(cuda.lib(), nseeds * 4);
  auto s_host = gd::burn::fma_seeds_f32(nseeds);
  ASSERT_EQ(cuda.fn().cuMemcpyHtoD_v2(seeds.get(), s_host.data(), nseeds * 4),
            CUDA_SUCCESS);
  Stream s(cuda.lib());
  Event start(cuda.lib()), end(cuda.lib());
  float ms = 0;
  start.record(s);
  EXPECT_EQ(cuda.fn().cuEventElapsedTime(&ms, start.get(), end.get()),
            CUDA_ERROR_INVALID_HANDLE);
  launch(cuda.lib(), m.function("gd_fma_f32"), grid, block, s, out.get(),
         seeds.get(), nseeds, rounds, iters);
  end.record(s);
  end.synchronize();
  EXPECT_TRUE(end.done());
  const double flops =
      gd::burn::fma_flops_per_round(iters) * rounds * grid * block;
  const double rate = 108 * 64 * 2 * 1410e6 * 0.95;
  EXPECT_NEAR(end.ms_since(start), flops / rate * 1e3 + 0.005, 0.001);
}

}  // namespace
}  // namespace fake_cuda_test
