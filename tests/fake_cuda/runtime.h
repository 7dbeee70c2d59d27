// The fake driver's state: devices, contexts (each with a worker thread that
// plays the GPU: it runs queued work in order on the CPU and advances a
// modelled GPU clock), memory, modules, streams and events.
//
// Rules it keeps as the real driver does, for any client:
//  - nothing but cuInit, cuDriverGetVersion and cuGetError* works before
//    cuInit (CUDA_ERROR_NOT_INITIALIZED);
//  - a context is current per thread (cuCtxCreate makes it current,
//    cuCtxSetCurrent changes it); memory, module, stream, event and launch
//    calls need one (CUDA_ERROR_INVALID_CONTEXT) and handles of another or a
//    destroyed context are CUDA_ERROR_INVALID_HANDLE;
//  - each device has one primary context, reference counted: the first
//    cuDevicePrimaryCtxRetain creates it (without making it current), each
//    one returns it, and the cuDevicePrimaryCtxRelease_v2 that drops the
//    count to zero destroys it like cuCtxDestroy (a release without a retain
//    is CUDA_ERROR_INVALID_CONTEXT, and so is cuCtxDestroy of a primary
//    context: it belongs to its retainers);
//  - device pointers are addresses in a range of their own (not host
//    addresses: dereferencing one on the host crashes, as on a real GPU);
//    a kernel or copy outside an allocation is CUDA_ERROR_ILLEGAL_ADDRESS,
//    which like injected errors is sticky: every later call in that context
//    returns it;
//  - work on a stream runs asynchronously, in order; events time it with
//    the modelled GPU clock (cuEventElapsedTime gives the modelled time of
//    the work between two events, e.g. FLOPs / the GPU's rate), and each
//    piece of work takes at least its modelled time in wall time too.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#define GD_CUDA_DECLARE_PROTOTYPES
#include "cpu_kernels.h"
#include "cuda/cuda_api.h"
#include "devices.h"
#include "ptx.h"

struct CUctx_st;
struct CUstream_st;
struct CUevent_st;
struct CUmod_st;
struct CUfunc_st;

namespace fake_cuda {

using Clock = std::chrono::steady_clock;

struct Device {
  DeviceModel model;
  uint64_t va_base = 0;               // device addresses of this GPU start here
  std::mutex mu;                      // guards the fields below
  std::map<uint64_t, uint64_t> used;  // VA -> bytes, every context's
  uint64_t allocated = 0;
  int contexts = 0;
  bool used_once = false;
  Clock::time_point first_use;  // first context: the faults' time zero
  std::atomic<int> compute_errors_left{0};
  // Stuck bits: (word address, bit, value).
  struct StuckBit {
    uint64_t addr;
    int bit;
    bool value;
  };
  std::vector<StuckBit> stuck;
  // The primary context and its retain count (guarded by Driver::primary_mu).
  CUctx_st* primary = nullptr;
  int primary_refs = 0;
};

// Backing memory of one allocation: anonymous pages, zero until written, so
// the cost of touching them falls on whoever first writes (the fake GPU's
// worker, as a GPU writes its own memory), not on cuMemAlloc's caller.
struct Allocation {
  Allocation() = default;
  Allocation(Allocation&& other) noexcept;
  Allocation& operator=(Allocation&& other) noexcept;
  ~Allocation();
  bool map(uint64_t size);  // false when the host has no memory for it
  uint64_t bytes = 0;
  uint8_t* host = nullptr;
};

struct Op {
  uint64_t seq = 0;
  std::function<CUresult(CUctx_st&)> run;
};

}  // namespace fake_cuda

struct CUctx_st : fake_cuda::DeviceMemory {
  fake_cuda::Device* dev = nullptr;
  unsigned flags = 0;
  bool primary = false;  // the device's primary context (set at creation)
  fake_cuda::Clock::time_point t0;  // the GPU clock's zero
  std::mutex mu;
  std::condition_variable cv;
  std::deque<fake_cuda::Op> queue;
  uint64_t submitted = 0, completed = 0;
  CUresult sticky = CUDA_SUCCESS;
  bool stopping = false;
  double clock_s = 0;  // modelled GPU time: the sum of the work's (worker only)
  double op_started_s = 0;  // wall time the running op was taken up
  std::map<uint64_t, fake_cuda::Allocation> allocs;  // guarded by mu
  std::map<void*, size_t> pinned;                    // guarded by mu
  std::thread worker;

  uint8_t* map(uint64_t ptr, uint64_t bytes) override;
  double wall_s() const;
};

struct CUstream_st {
  CUctx_st* ctx = nullptr;
  uint64_t last_seq = 0;
};

struct CUevent_st {
  CUctx_st* ctx = nullptr;
  unsigned flags = 0;
  bool recorded = false;
  uint64_t seq = 0;
  double time_s = 0;  // GPU clock when the work before it finished
};

struct CUfunc_st {
  CUmod_st* module = nullptr;
  fake_cuda::PtxEntry entry;
  const fake_cuda::CpuKernel* kernel = nullptr;
};

struct CUmod_st {
  CUctx_st* ctx = nullptr;
  std::vector<std::unique_ptr<CUfunc_st>> functions;
};

namespace fake_cuda {

// Global state, guarded by its mutex.
struct Driver {
  std::mutex mu;
  std::mutex primary_mu;  // taken before mu: the devices' primary contexts
  bool initialized = false;
  CUresult init_error = CUDA_SUCCESS;
  std::vector<std::unique_ptr<Device>> devices;
  std::set<CUctx_st*> contexts;
  std::set<CUstream_st*> streams;
  std::set<CUevent_st*> events;
  std::set<CUmod_st*> modules;
};
Driver& driver();

// The calling thread's current context (nullptr: none or destroyed).
CUctx_st* current_context();
void set_current_context(CUctx_st* ctx);

// Prologue of a call that needs an initialised driver.
CUresult require_init();
// Prologue of a call that needs a current, healthy context: *ctx set.
CUresult require_context(CUctx_st** ctx);

// Queues `run` on ctx's GPU; returns its sequence number (0 when the
// context is in an error state: *rc says which).
uint64_t submit(CUctx_st& ctx, std::function<CUresult(CUctx_st&)> run,
                CUresult* rc);
// Blocks until work `seq` has finished; the context's sticky error if any.
CUresult wait_for(CUctx_st& ctx, uint64_t seq);
// Starts / stops (draining nothing) a context's worker.
void start_worker(CUctx_st& ctx);
void stop_worker(CUctx_st& ctx);

// Advances ctx's GPU clock by `seconds` of modelled work, and sleeps so that
// the op takes at least that long in wall time (worker only). The clock
// counts work only, never idle time or the CPU emulation's cost, so events
// time the work between them exactly as modelled however busy the host is.
void spend_gpu_time(CUctx_st& ctx, double seconds);
// Forces the device's stuck bits inside ctx's allocations (after a write).
void apply_stuck_bits(CUctx_st& ctx);

// Device memory of ctx as host bytes; nullptr unless inside one allocation.
uint8_t* device_bytes(CUctx_st& ctx, CUdeviceptr ptr, uint64_t bytes);

}  // namespace fake_cuda
