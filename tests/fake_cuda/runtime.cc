#include "runtime.h"

#include <pthread.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstring>

namespace fake_cuda {

namespace {
thread_local CUctx_st* t_current = nullptr;
}  // namespace

Driver& driver() {
  static Driver* d = new Driver();  // never destroyed: workers may outlive exit
  return *d;
}

CUctx_st* current_context() {
  Driver& d = driver();
  std::lock_guard<std::mutex> lock(d.mu);
  return d.contexts.count(t_current) ? t_current : nullptr;
}

void set_current_context(CUctx_st* ctx) { t_current = ctx; }

CUresult require_init() {
  Driver& d = driver();
  std::lock_guard<std::mutex> lock(d.mu);
  if (!d.initialized) return CUDA_ERROR_NOT_INITIALIZED;
  return CUDA_SUCCESS;
}

CUresult require_context(CUctx_st** out) {
  if (CUresult rc = require_init(); rc != CUDA_SUCCESS) return rc;
  CUctx_st* ctx = current_context();
  if (!ctx) return CUDA_ERROR_INVALID_CONTEXT;
  std::lock_guard<std::mutex> lock(ctx->mu);
  if (ctx->sticky != CUDA_SUCCESS) return ctx->sticky;
  *out = ctx;
  return CUDA_SUCCESS;
}

}  // namespace fake_cuda

double CUctx_st::wall_s() const {
  return std::chrono::duration<double>(fake_cuda::Clock::now() - t0).count();
}

uint8_t* CUctx_st::map(uint64_t ptr, uint64_t bytes) {
  return fake_cuda::device_bytes(*this, ptr, bytes);
}

namespace fake_cuda {

Allocation::Allocation(Allocation&& other) noexcept
    : bytes(other.bytes), host(other.host) {
  other.host = nullptr;
  other.bytes = 0;
}

Allocation& Allocation::operator=(Allocation&& other) noexcept {
  std::swap(bytes, other.bytes);
  std::swap(host, other.host);
  return *this;
}

Allocation::~Allocation() {
  if (host) munmap(host, bytes);
}

bool Allocation::map(uint64_t size) {
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return false;
  host = static_cast<uint8_t*>(p);
  bytes = size;
  return true;
}

uint8_t* device_bytes(CUctx_st& ctx, CUdeviceptr ptr, uint64_t bytes) {
  std::lock_guard<std::mutex> lock(ctx.mu);
  auto it = ctx.allocs.upper_bound(ptr);
  if (it == ctx.allocs.begin()) return nullptr;
  --it;
  const uint64_t offset = ptr - it->first;
  if (offset > it->second.bytes || bytes > it->second.bytes - offset)
    return nullptr;
  return it->second.host + offset;
}

uint64_t submit(CUctx_st& ctx, std::function<CUresult(CUctx_st&)> run,
                CUresult* rc) {
  std::lock_guard<std::mutex> lock(ctx.mu);
  if (ctx.sticky != CUDA_SUCCESS) {
    *rc = ctx.sticky;
    return 0;
  }
  Op op;
  op.seq = ++ctx.submitted;
  op.run = std::move(run);
  ctx.queue.push_back(std::move(op));
  ctx.cv.notify_all();
  *rc = CUDA_SUCCESS;
  return ctx.submitted;
}

CUresult wait_for(CUctx_st& ctx, uint64_t seq) {
  std::unique_lock<std::mutex> lock(ctx.mu);
  ctx.cv.wait(lock, [&] { return ctx.completed >= seq || ctx.stopping; });
  return ctx.sticky;
}

void spend_gpu_time(CUctx_st& ctx, double seconds) {
  ctx.clock_s += seconds;
  const double left = ctx.op_started_s + seconds - ctx.wall_s();
  if (left > 0) {
    // Woken early when the context is being destroyed.
    std::unique_lock<std::mutex> lock(ctx.mu);
    ctx.cv.wait_for(lock, std::chrono::duration<double>(left),
                    [&] { return ctx.stopping; });
  }
}

void apply_stuck_bits(CUctx_st& ctx) {
  for (const auto& s : ctx.dev->stuck) {
    uint8_t* p = device_bytes(ctx, s.addr, 4);
    if (!p) continue;
    uint32_t w;
    std::memcpy(&w, p, 4);
    w = s.value ? (w | (1u << s.bit)) : (w & ~(1u << s.bit));
    std::memcpy(p, &w, 4);
  }
}

namespace {

// What the device's faults do to the next piece of work: nothing, a sticky
// error, or a hang.
enum class FaultNow { none, error, hang };

FaultNow fault_now(const Device& dev) {
  const auto& f = dev.model.faults;
  const double since =
      std::chrono::duration<double>(Clock::now() - dev.first_use).count();
  if (f.hang_after_s && since >= *f.hang_after_s) return FaultNow::hang;
  if (f.error && since >= f.error_after_s) return FaultNow::error;
  return FaultNow::none;
}

void worker_loop(CUctx_st* ctx) {
  // Named apart from the client's threads (benchmarks split the CPU time).
  pthread_setname_np(pthread_self(), "fake-gpu");
  std::unique_lock<std::mutex> lock(ctx->mu);
  while (true) {
    ctx->cv.wait(lock, [&] { return ctx->stopping || !ctx->queue.empty(); });
    if (ctx->stopping) return;
    Op op = std::move(ctx->queue.front());
    ctx->queue.pop_front();
    if (ctx->sticky == CUDA_SUCCESS) {
      switch (fault_now(*ctx->dev)) {
        case FaultNow::hang:
          // A hung GPU: nothing completes until the context is destroyed.
          ctx->cv.wait(lock, [&] { return ctx->stopping; });
          return;
        case FaultNow::error:
          ctx->sticky = static_cast<CUresult>(*ctx->dev->model.faults.error);
          break;
        case FaultNow::none: {
          ctx->op_started_s = ctx->wall_s();
          lock.unlock();
          CUresult rc = op.run(*ctx);
          if (const double ms = ctx->dev->model.faults.op_wall_ms; ms > 0)
            std::this_thread::sleep_for(
                std::chrono::duration<double, std::milli>(ms));
          lock.lock();
          if (rc != CUDA_SUCCESS && ctx->sticky == CUDA_SUCCESS)
            ctx->sticky = rc;
          break;
        }
      }
    }
    ctx->completed = op.seq;
    ctx->cv.notify_all();
  }
}

}  // namespace

void start_worker(CUctx_st& ctx) {
  ctx.worker = std::thread(worker_loop, &ctx);
}

void stop_worker(CUctx_st& ctx) {
  {
    std::lock_guard<std::mutex> lock(ctx.mu);
    ctx.stopping = true;
    ctx.cv.notify_all();
  }
  if (ctx.worker.joinable()) ctx.worker.join();
}

}  // namespace fake_cuda
