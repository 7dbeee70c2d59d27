// Loads the fake libcuda.so.1 and the fake libnccl.so.2 by path, as an NCCL
// client does (the driver first: the NCCL library's own libcuda.so.1 is then
// that one, the loader matching the soname). One copy of each per process:
// the fake driver reads its environment (the 4-GPU scenario, no faults) at
// the first cuInit, the fake NCCL its own (FAKE_NCCL_*) at each
// ncclCommInitAll, which each test sets first. Nothing of gpudoctor is used:
// the tests are a client written from the public APIs only.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "cuda/cuda_api.h"
#include "cuda/nccl_api.h"

namespace fake_nccl_test {

struct CudaFns {
#define FAKE_NCCL_TEST_MEMBER(name, params) name##_fn name = nullptr;
  GD_CUDA_FUNCTIONS(FAKE_NCCL_TEST_MEMBER)
};

struct NcclFns {
  GD_NCCL_FUNCTIONS(FAKE_NCCL_TEST_MEMBER)
#undef FAKE_NCCL_TEST_MEMBER
  ncclGetErrorString_fn ncclGetErrorString = nullptr;
};

// The CUDA ordinals of the scenario's GPUs: fastest first, so the H100s
// (NVML 2, 3) are CUDA 0, 1 and the A100s (NVML 0, 1) CUDA 2, 3.
inline int ordinal_of(int nvml) { return (nvml + 2) % 4; }

class Libraries {
 public:
  static const Libraries& get() {
    static const Libraries* libs = new Libraries();  // never unloaded
    return *libs;
  }
  CudaFns cu;
  NcclFns nccl;
  std::string error;  // why they could not be loaded ("" when they were)

 private:
  Libraries() {
    for (const char* name :
         {"FAKE_NVML_SCENARIO", "FAKE_CUDA_FAULTS", "FAKE_CUDA_MEMORY_MIB",
          "CUDA_DEVICE_ORDER", "CUDA_VISIBLE_DEVICES"})
      unsetenv(name);
    setenv("FAKE_CUDA_SCENARIO", FAKE_NVML_SCENARIO_4GPU, 1);
    void* cuda_handle = dlopen(FAKE_CUDA_LIB, RTLD_NOW | RTLD_LOCAL);
    void* nccl_handle =
        cuda_handle ? dlopen(FAKE_NCCL_LIB, RTLD_NOW | RTLD_LOCAL) : nullptr;
    if (!nccl_handle) {
      const char* why = dlerror();
      error = why ? why : "dlopen failed";
      return;
    }
    // dlsym's void* converts to a function pointer (POSIX).
#define FAKE_NCCL_TEST_RESOLVE_CU(name, params) \
  cu.name = reinterpret_cast<name##_fn>(dlsym(cuda_handle, #name));
    GD_CUDA_FUNCTIONS(FAKE_NCCL_TEST_RESOLVE_CU)
#undef FAKE_NCCL_TEST_RESOLVE_CU
#define FAKE_NCCL_TEST_RESOLVE_NCCL(name, params) \
  nccl.name = reinterpret_cast<name##_fn>(dlsym(nccl_handle, #name));
    GD_NCCL_FUNCTIONS(FAKE_NCCL_TEST_RESOLVE_NCCL)
#undef FAKE_NCCL_TEST_RESOLVE_NCCL
    nccl.ncclGetErrorString = reinterpret_cast<ncclGetErrorString_fn>(
        dlsym(nccl_handle, "ncclGetErrorString"));
  }
};

// Each test: the libraries, and the fake NCCL's environment set to `env`.
class FakeNcclTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(libs().error, "");
    set_env({});
    ASSERT_EQ(cu().cuInit(0), CUDA_SUCCESS);
  }
  void TearDown() override {
    for (ncclComm_t c : comms_) nccl().ncclCommDestroy(c);
  }
  static const Libraries& libs() { return Libraries::get(); }
  static const CudaFns& cu() { return libs().cu; }
  static const NcclFns& nccl() { return libs().nccl; }

  // FAKE_NCCL_* as given, the others unset.
  static void set_env(const std::map<std::string, std::string>& env) {
    for (const char* name :
         {"FAKE_NCCL_BUS_GBPS", "FAKE_NCCL_TIMEOUT_S", "FAKE_NCCL_FAULTS"})
      unsetenv(name);
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
  }

  // ncclCommInitAll over `ordinals`; destroyed after the test.
  std::vector<ncclComm_t> init_all(const std::vector<int>& ordinals) {
    std::vector<ncclComm_t> comms(ordinals.size(), nullptr);
    const ncclResult_t rc = nccl().ncclCommInitAll(
        comms.data(), static_cast<int>(ordinals.size()), ordinals.data());
    EXPECT_EQ(rc, ncclSuccess) << nccl().ncclGetErrorString(rc);
    if (rc != ncclSuccess) return {};
    comms_.insert(comms_.end(), comms.begin(), comms.end());
    return comms;
  }

  // Destroys one of init_all's communicators before the test's end.
  void destroy(ncclComm_t comm) {
    EXPECT_EQ(nccl().ncclCommDestroy(comm), ncclSuccess);
    for (auto& c : comms_)
      if (c == comm) c = nullptr;
  }

 private:
  std::vector<ncclComm_t> comms_;
};

// One GPU of a client, as a real client sets it up: its primary context
// (retained, made current to allocate), a send and a receive buffer, a
// stream and two events. Released (the primary context with all of it) at
// the end.
struct Gpu {
  int ordinal = 0;
  CUcontext ctx = nullptr;
  CUdeviceptr send = 0, recv = 0;
  CUstream stream = nullptr;
  CUevent start = nullptr, end = nullptr;
};

class Gpus {
 public:
  Gpus(const CudaFns& cu, const std::vector<int>& ordinals, size_t bytes)
      : cu_(cu), bytes_(bytes) {
    for (int ordinal : ordinals) {
      Gpu g;
      g.ordinal = ordinal;
      check(cu.cuDevicePrimaryCtxRetain(&g.ctx, ordinal), "retain");
      gpus_.push_back(g);
      Gpu& gpu = gpus_.back();
      check(cu.cuCtxSetCurrent(gpu.ctx), "cuCtxSetCurrent");
      check(cu.cuMemAlloc_v2(&gpu.send, bytes), "cuMemAlloc_v2");
      check(cu.cuMemAlloc_v2(&gpu.recv, bytes), "cuMemAlloc_v2");
      check(cu.cuStreamCreate(&gpu.stream, CU_STREAM_NON_BLOCKING),
            "cuStreamCreate");
      check(cu.cuEventCreate(&gpu.start, 0), "cuEventCreate");
      check(cu.cuEventCreate(&gpu.end, 0), "cuEventCreate");
    }
  }
  ~Gpus() {
    for (const auto& g : gpus_) cu_.cuDevicePrimaryCtxRelease_v2(g.ordinal);
    cu_.cuCtxSetCurrent(nullptr);
  }
  Gpus(const Gpus&) = delete;
  Gpus& operator=(const Gpus&) = delete;

  size_t size() const { return gpus_.size(); }
  size_t bytes() const { return bytes_; }
  Gpu& operator[](size_t r) { return gpus_[r]; }

  // Makes rank r's context current on this thread.
  void use(size_t r) {
    check(cu_.cuCtxSetCurrent(gpus_[r].ctx), "cuCtxSetCurrent");
  }
  // Fills rank r's send buffer with a 32-bit word (cuMemsetD32_v2).
  void fill_send(size_t r, uint32_t word) {
    use(r);
    check(cu_.cuMemsetD32_v2(gpus_[r].send, word, bytes_ / 4),
          "cuMemsetD32_v2");
  }
  // Copies `host` into rank r's send buffer.
  template <typename T>
  void put_send(size_t r, const std::vector<T>& host) {
    use(r);
    check(cu_.cuMemcpyHtoD_v2(gpus_[r].send, host.data(),
                              host.size() * sizeof(T)),
          "cuMemcpyHtoD_v2");
  }
  // Rank r's receive buffer (n elements), after its stream has finished.
  template <typename T>
  std::vector<T> recv(size_t r, size_t n) {
    use(r);
    std::vector<T> out(n);
    check(cu_.cuStreamSynchronize(gpus_[r].stream), "cuStreamSynchronize");
    check(cu_.cuMemcpyDtoH_v2(out.data(), gpus_[r].recv, n * sizeof(T)),
          "cuMemcpyDtoH_v2");
    return out;
  }
  void record_start(size_t r) {
    use(r);
    check(cu_.cuEventRecord(gpus_[r].start, gpus_[r].stream), "record");
  }
  void record_end(size_t r) {
    use(r);
    check(cu_.cuEventRecord(gpus_[r].end, gpus_[r].stream), "record");
  }
  // Modelled ms between rank r's events (after its stream has finished).
  double elapsed_ms(size_t r) {
    use(r);
    check(cu_.cuEventSynchronize(gpus_[r].end), "cuEventSynchronize");
    float ms = -1;
    check(cu_.cuEventElapsedTime(&ms, gpus_[r].start, gpus_[r].end),
          "cuEventElapsedTime");
    return ms;
  }
  // cuStreamSynchronize of rank r's stream, its context made current.
  CUresult sync(size_t r) {
    use(r);
    return cu_.cuStreamSynchronize(gpus_[r].stream);
  }

 private:
  static void check(CUresult rc, const char* what) {
    if (rc != CUDA_SUCCESS) ADD_FAILURE() << what << ": CUresult " << rc;
  }
  const CudaFns& cu_;
  size_t bytes_;
  std::vector<Gpu> gpus_;
};

inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

inline void* ptr(CUdeviceptr p) { return reinterpret_cast<void*>(p); }

}  // namespace fake_nccl_test
