// The CUDA driver API functions the fake exports (cuda_api.h's list, with the
// real symbols' names and signatures; the prototypes are checked against the
// project's declarations), and its hooks for the other fakes
// (fake_cuda_hooks.h).
#define GD_CUDA_DECLARE_PROTOTYPES  // before any header includes cuda_api.h
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>

#include "fake_cuda_hooks.h"
#include "runtime.h"

using namespace fake_cuda;

namespace {

constexpr uint64_t kVaBase = 0x7f0000000000ull;  // first GPU's device addresses
constexpr uint64_t kVaSpan = 0x10000000000ull;   // 1 TiB of addresses per GPU
constexpr uint64_t kAlign = 512;                 // cuMemAlloc's alignment
constexpr uint64_t kContextReserve = 1u << 20;   // memory a context keeps

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

Device* device_at(int ordinal) {
  Driver& d = driver();
  std::lock_guard<std::mutex> lock(d.mu);
  if (!d.initialized || ordinal < 0 ||
      ordinal >= static_cast<int>(d.devices.size()))
    return nullptr;
  return d.devices[static_cast<size_t>(ordinal)].get();
}

CUresult device_call(CUdevice dev, Device** out) {
  if (CUresult rc = require_init(); rc != CUDA_SUCCESS) return rc;
  *out = device_at(dev);
  return *out ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

bool stream_ok(CUctx_st* ctx, CUstream s) {
  if (!s) return true;  // the legacy default stream
  Driver& d = driver();
  std::lock_guard<std::mutex> lock(d.mu);
  return d.streams.count(s) && s->ctx == ctx;
}

bool event_ok(CUctx_st* ctx, CUevent e) {
  Driver& d = driver();
  std::lock_guard<std::mutex> lock(d.mu);
  return d.events.count(e) && e->ctx == ctx;
}

// Queues work on a stream (NULL: the default stream); returns its sequence.
CUresult enqueue(CUctx_st* ctx, CUstream s,
                 std::function<CUresult(CUctx_st&)> run,
                 uint64_t* seq_out = nullptr) {
  CUresult rc = CUDA_SUCCESS;
  uint64_t seq = submit(*ctx, std::move(run), &rc);
  if (rc != CUDA_SUCCESS) return rc;
  if (s) {
    std::lock_guard<std::mutex> lock(ctx->mu);
    s->last_seq = seq;
  }
  if (seq_out) *seq_out = seq;
  return CUDA_SUCCESS;
}

size_t param_size(const std::string& type) {
  if (type.size() < 2) return 0;
  const std::string bits = type.substr(1);
  if (bits == "64") return 8;
  if (bits == "32") return 4;
  if (bits == "16") return 2;
  if (bits == "8") return 1;
  return 0;
}

}  // namespace

// ---- initialisation and devices
// ----------------------------------------------

FAKE_EXPORT CUresult cuInit(unsigned int Flags) {
  if (Flags != 0) return CUDA_ERROR_INVALID_VALUE;
  Driver& d = driver();
  std::lock_guard<std::mutex> lock(d.mu);
  if (d.initialized) return CUDA_SUCCESS;
  if (d.init_error != CUDA_SUCCESS) return d.init_error;
  try {
    std::vector<DeviceModel> models = load_devices();
    if (models.empty()) {
      d.init_error = CUDA_ERROR_NO_DEVICE;
      return d.init_error;
    }
    uint64_t base = kVaBase;
    for (auto& m : models) {
      auto dev = std::make_unique<Device>();
      dev->model = std::move(m);
      dev->va_base = base;
      base += kVaSpan;
      const int n = dev->model.faults.bitflips;
      for (int k = 0; k < n; ++k) {
        uint64_t offset = dev->model.total_bytes /
                          static_cast<uint64_t>(n + 1) *
                          static_cast<uint64_t>(k + 1);
        dev->stuck.push_back(
            {dev->va_base + (offset & ~uint64_t{3}), k % 32, k % 2 == 0});
      }
      dev->compute_errors_left = dev->model.faults.compute_errors;
      d.devices.push_back(std::move(dev));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fake libcuda: %s\n", e.what());
    d.init_error = CUDA_ERROR_INVALID_VALUE;
    return d.init_error;
  }
  d.initialized = true;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDriverGetVersion(int* driverVersion) {
  if (!driverVersion) return CUDA_ERROR_INVALID_VALUE;
  *driverVersion = 12020;  // the scenarios' driver (535) speaks CUDA 12.2
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGetCount(int* count) {
  if (!count) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult rc = require_init(); rc != CUDA_SUCCESS) return rc;
  Driver& d = driver();
  std::lock_guard<std::mutex> lock(d.mu);
  *count = static_cast<int>(d.devices.size());
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  if (!device) return CUDA_ERROR_INVALID_VALUE;
  Device* dev = nullptr;
  if (CUresult rc = device_call(ordinal, &dev); rc != CUDA_SUCCESS) return rc;
  *device = ordinal;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGetName(char* name, int len, CUdevice dev) {
  if (!name || len <= 0) return CUDA_ERROR_INVALID_VALUE;
  Device* d = nullptr;
  if (CUresult rc = device_call(dev, &d); rc != CUDA_SUCCESS) return rc;
  // Truncated to fit, as the driver does.
  std::snprintf(name, static_cast<size_t>(len), "%s", d->model.name.c_str());
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGetAttribute(int* pi, CUdevice_attribute attrib,
                                          CUdevice dev) {
  if (!pi) return CUDA_ERROR_INVALID_VALUE;
  Device* d = nullptr;
  if (CUresult rc = device_call(dev, &d); rc != CUDA_SUCCESS) return rc;
  const DeviceModel& m = d->model;
  switch (attrib) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
      *pi = 1024;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
      *pi = 2147483647;
      break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
      *pi = 32;
      break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE:
      *pi = m.clock_khz;
      break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
      *pi = m.sm_count;
      break;
    case CU_DEVICE_ATTRIBUTE_ECC_ENABLED:
      *pi = m.ecc_enabled ? 1 : 0;
      break;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID:
      *pi = m.pci_bus;
      break;
    case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID:
      *pi = m.pci_device;
      break;
    case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID:
      *pi = m.pci_domain;
      break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE:
      *pi = m.mem_clock_khz;
      break;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH:
      *pi = m.mem_bus_width_bits;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR:
      *pi = 2048;
      break;
    case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT:
      *pi = 2;
      break;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
      *pi = 1;
      break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
      *pi = m.cc_major;
      break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
      *pi = m.cc_minor;
      break;
    default:
      return CUDA_ERROR_INVALID_VALUE;  // not modelled
  }
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice dev) {
  if (!bytes) return CUDA_ERROR_INVALID_VALUE;
  Device* d = nullptr;
  if (CUresult rc = device_call(dev, &d); rc != CUDA_SUCCESS) return rc;
  *bytes = d->model.total_bytes;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGetPCIBusId(char* pciBusId, int len,
                                         CUdevice dev) {
  if (!pciBusId || len <= 0) return CUDA_ERROR_INVALID_VALUE;
  Device* d = nullptr;
  if (CUresult rc = device_call(dev, &d); rc != CUDA_SUCCESS) return rc;
  std::snprintf(pciBusId, static_cast<size_t>(len), "%s",
                d->model.pci_bus_id.c_str());
  return CUDA_SUCCESS;
}

// ---- contexts
// -------------------------------------------------------------------

namespace {

// A new context on d with its worker running; not made current.
CUctx_st* new_context(Device* d, unsigned flags, bool primary) {
  auto* ctx = new CUctx_st();
  ctx->dev = d;
  ctx->flags = flags;
  ctx->primary = primary;
  ctx->t0 = Clock::now();
  {
    std::lock_guard<std::mutex> lock(d->mu);
    if (!d->used_once) {
      d->used_once = true;
      d->first_use = ctx->t0;
    }
    ++d->contexts;
  }
  start_worker(*ctx);
  Driver& drv = driver();
  std::lock_guard<std::mutex> lock(drv.mu);
  drv.contexts.insert(ctx);
  return ctx;
}

// Destroys a live context that is (primary) or is not a primary context:
// its handles become invalid, its worker stops (queued work is dropped) and
// its memory is freed. False, doing nothing, for anything else.
bool end_context(CUctx_st* ctx, bool primary) {
  Driver& drv = driver();
  {
    std::lock_guard<std::mutex> lock(drv.mu);
    if (!ctx || !drv.contexts.count(ctx) || ctx->primary != primary)
      return false;
    drv.contexts.erase(ctx);
    for (auto it = drv.streams.begin(); it != drv.streams.end();)
      it = (*it)->ctx == ctx ? (delete *it, drv.streams.erase(it))
                             : std::next(it);
    for (auto it = drv.events.begin(); it != drv.events.end();)
      it = (*it)->ctx == ctx ? (delete *it, drv.events.erase(it))
                             : std::next(it);
    for (auto it = drv.modules.begin(); it != drv.modules.end();)
      it = (*it)->ctx == ctx ? (delete *it, drv.modules.erase(it))
                             : std::next(it);
  }
  stop_worker(*ctx);
  {
    std::lock_guard<std::mutex> lock(ctx->dev->mu);
    for (const auto& [ptr, a] : ctx->allocs) {
      ctx->dev->used.erase(ptr);
      ctx->dev->allocated -= a.bytes;
    }
    --ctx->dev->contexts;
  }
  for (auto& [p, n] : ctx->pinned) std::free(p);
  if (current_context() == nullptr) set_current_context(nullptr);
  delete ctx;
  return true;
}

}  // namespace

FAKE_EXPORT CUresult cuCtxCreate_v2(CUcontext* pctx, unsigned int flags,
                                    CUdevice dev) {
  if (!pctx) return CUDA_ERROR_INVALID_VALUE;
  if (flags & ~0x1Fu) return CUDA_ERROR_INVALID_VALUE;
  Device* d = nullptr;
  if (CUresult rc = device_call(dev, &d); rc != CUDA_SUCCESS) return rc;
  CUctx_st* ctx = new_context(d, flags, false);
  set_current_context(ctx);
  *pctx = ctx;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuCtxDestroy_v2(CUcontext ctx) {
  if (CUresult rc = require_init(); rc != CUDA_SUCCESS) return rc;
  // A primary context is not the caller's to destroy (its retainers share it).
  return end_context(ctx, false) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

FAKE_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev) {
  if (!pctx) return CUDA_ERROR_INVALID_VALUE;
  Device* d = nullptr;
  if (CUresult rc = device_call(dev, &d); rc != CUDA_SUCCESS) return rc;
  std::lock_guard<std::mutex> lock(driver().primary_mu);
  if (!d->primary) d->primary = new_context(d, 0, true);
  ++d->primary_refs;
  *pctx = d->primary;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev) {
  Device* d = nullptr;
  if (CUresult rc = device_call(dev, &d); rc != CUDA_SUCCESS) return rc;
  std::lock_guard<std::mutex> lock(driver().primary_mu);
  if (!d->primary) return CUDA_ERROR_INVALID_CONTEXT;
  if (--d->primary_refs > 0) return CUDA_SUCCESS;
  CUctx_st* ctx = d->primary;
  d->primary = nullptr;
  end_context(ctx, true);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuCtxSetCurrent(CUcontext ctx) {
  if (CUresult rc = require_init(); rc != CUDA_SUCCESS) return rc;
  if (ctx) {
    Driver& drv = driver();
    std::lock_guard<std::mutex> lock(drv.mu);
    if (!drv.contexts.count(ctx)) return CUDA_ERROR_INVALID_CONTEXT;
  }
  set_current_context(ctx);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuCtxGetCurrent(CUcontext* pctx) {
  if (!pctx) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult rc = require_init(); rc != CUDA_SUCCESS) return rc;
  *pctx = current_context();
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuCtxSynchronize(void) {
  CUctx_st* ctx = nullptr;
  if (CUresult rc = require_context(&ctx); rc != CUDA_SUCCESS) return rc;
  uint64_t last;
  {
    std::lock_guard<std::mutex> lock(ctx->mu);
    last = ctx->submitted;
  }
  return wait_for(*ctx, last);
}

// ---- memory
// ----------------------------------------------------------------------

FAKE_EXPORT CUresult cuMemGetInfo_v2(size_t* free, size_t* total) {
  if (!free || !total) return CUDA_ERROR_INVALID_VALUE;
  CUctx_st* ctx = nullptr;
  if (CUresult rc = require_context(&ctx); rc != CUDA_SUCCESS) return rc;
  Device* d = ctx->dev;
  std::lock_guard<std::mutex> lock(d->mu);
  const uint64_t kept =
      d->allocated + kContextReserve * static_cast<uint64_t>(d->contexts);
  *total = d->model.total_bytes;
  *free = kept >= d->model.total_bytes ? 0 : d->model.total_bytes - kept;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytesize) {
  if (!dptr || bytesize == 0) return CUDA_ERROR_INVALID_VALUE;
  CUctx_st* ctx = nullptr;
  if (CUresult rc = require_context(&ctx); rc != CUDA_SUCCESS) return rc;
  Device* d = ctx->dev;
  const uint64_t size = (bytesize + kAlign - 1) / kAlign * kAlign;
  uint64_t at = 0;
  {
    std::lock_guard<std::mutex> lock(d->mu);
    const uint64_t kept =
        d->allocated + kContextReserve * static_cast<uint64_t>(d->contexts);
    if (kept + size > d->model.total_bytes) return CUDA_ERROR_OUT_OF_MEMORY;
    // First fit in the device's address range.
    uint64_t candidate = d->va_base;
    for (const auto& [ptr, n] : d->used) {
      if (ptr - candidate >= size) break;
      candidate = ptr + n;
    }
    if (candidate + size > d->va_base + d->model.total_bytes)
      return CUDA_ERROR_OUT_OF_MEMORY;
    at = candidate;
    d->used[at] = size;
    d->allocated += size;
  }
  Allocation a;
  if (!a.map(bytesize)) {
    std::lock_guard<std::mutex> lock(d->mu);
    d->used.erase(at);
    d->allocated -= size;
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  {
    std::lock_guard<std::mutex> lock(ctx->mu);
    ctx->allocs[at] = std::move(a);
  }
  apply_stuck_bits(*ctx);
  *dptr = at;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr) {
  if (CUresult rc = require_init(); rc != CUDA_SUCCESS) return rc;
  CUctx_st* ctx = current_context();
  if (!ctx) return CUDA_ERROR_INVALID_CONTEXT;
  // Freeing waits for the work already queued (it may still use the memory).
  uint64_t last;
  {
    std::lock_guard<std::mutex> lock(ctx->mu);
    last = ctx->submitted;
  }
  wait_for(*ctx, last);
  std::lock_guard<std::mutex> lock(ctx->mu);
  auto it = ctx->allocs.find(dptr);
  if (it == ctx->allocs.end()) return CUDA_ERROR_INVALID_VALUE;
  {
    std::lock_guard<std::mutex> dlock(ctx->dev->mu);
    ctx->dev->allocated -= ctx->dev->used[dptr];
    ctx->dev->used.erase(dptr);
  }
  ctx->allocs.erase(it);
  // In an error state the memory is still released, and the error reported.
  return ctx->sticky;
}

FAKE_EXPORT CUresult cuMemHostAlloc(void** pp, size_t bytesize,
                                    unsigned int Flags) {
  if (!pp || bytesize == 0 || (Flags & ~0x7u)) return CUDA_ERROR_INVALID_VALUE;
  CUctx_st* ctx = nullptr;
  if (CUresult rc = require_context(&ctx); rc != CUDA_SUCCESS) return rc;
  void* p = std::aligned_alloc(4096, (bytesize + 4095) / 4096 * 4096);
  if (!p) return CUDA_ERROR_OUT_OF_MEMORY;
  std::lock_guard<std::mutex> lock(ctx->mu);
  ctx->pinned[p] = bytesize;
  *pp = p;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemFreeHost(void* p) {
  if (CUresult rc = require_init(); rc != CUDA_SUCCESS) return rc;
  Driver& drv = driver();
  std::lock_guard<std::mutex> lock(drv.mu);
  for (CUctx_st* ctx : drv.contexts) {
    std::lock_guard<std::mutex> clock(ctx->mu);
    auto it = ctx->pinned.find(p);
    if (it == ctx->pinned.end()) continue;
    std::free(p);
    ctx->pinned.erase(it);
    return CUDA_SUCCESS;
  }
  return CUDA_ERROR_INVALID_VALUE;
}

namespace {

CUresult copy_op(CUctx_st& ctx, uint8_t* dst_host, const uint8_t* src_host,
                 CUdeviceptr dev, size_t bytes, bool to_device) {
  uint8_t* d = device_bytes(ctx, dev, bytes);
  if (!d) return CUDA_ERROR_ILLEGAL_ADDRESS;
  if (to_device) {
    std::memcpy(d, src_host, bytes);
    apply_stuck_bits(ctx);
  } else {
    std::memcpy(dst_host, d, bytes);
  }
  spend_gpu_time(ctx, 10e-6 + static_cast<double>(bytes) /
                                  ctx.dev->model.copy_bytes_per_s);
  return CUDA_SUCCESS;
}

// Validates a copy's arguments before it is queued (the driver checks the
// device range up front: a bad one is CUDA_ERROR_INVALID_VALUE, not sticky).
CUresult copy(CUdeviceptr dev, void* dst_host, const void* src_host,
              size_t bytes, CUstream s, bool to_device, bool sync) {
  CUctx_st* ctx = nullptr;
  if (CUresult rc = require_context(&ctx); rc != CUDA_SUCCESS) return rc;
  if ((to_device ? src_host == nullptr : dst_host == nullptr) && bytes)
    return CUDA_ERROR_INVALID_VALUE;
  if (!stream_ok(ctx, s)) return CUDA_ERROR_INVALID_HANDLE;
  if (bytes == 0) return CUDA_SUCCESS;
  if (!device_bytes(*ctx, dev, bytes)) return CUDA_ERROR_INVALID_VALUE;
  auto* dh = static_cast<uint8_t*>(dst_host);
  auto* sh = static_cast<const uint8_t*>(src_host);
  uint64_t seq = 0;
  if (CUresult rc = enqueue(
          ctx, s,
          [=](CUctx_st& c) {
            return copy_op(c, dh, sh, dev, bytes, to_device);
          },
          &seq);
      rc != CUDA_SUCCESS)
    return rc;
  return sync ? wait_for(*ctx, seq) : CUDA_SUCCESS;
}

}  // namespace

FAKE_EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void* srcHost,
                                     size_t ByteCount) {
  return copy(dstDevice, nullptr, srcHost, ByteCount, nullptr, true, true);
}

FAKE_EXPORT CUresult cuMemcpyDtoH_v2(void* dstHost, CUdeviceptr srcDevice,
                                     size_t ByteCount) {
  return copy(srcDevice, dstHost, nullptr, ByteCount, nullptr, false, true);
}

FAKE_EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice,
                                          const void* srcHost, size_t ByteCount,
                                          CUstream hStream) {
  return copy(dstDevice, nullptr, srcHost, ByteCount, hStream, true, false);
}

FAKE_EXPORT CUresult cuMemcpyDtoHAsync_v2(void* dstHost, CUdeviceptr srcDevice,
                                          size_t ByteCount, CUstream hStream) {
  return copy(srcDevice, dstHost, nullptr, ByteCount, hStream, false, false);
}

FAKE_EXPORT CUresult cuMemsetD32_v2(CUdeviceptr dstDevice, unsigned int ui,
                                    size_t N) {
  CUctx_st* ctx = nullptr;
  if (CUresult rc = require_context(&ctx); rc != CUDA_SUCCESS) return rc;
  if (N == 0) return CUDA_SUCCESS;
  if (dstDevice % 4 || !device_bytes(*ctx, dstDevice, N * 4))
    return CUDA_ERROR_INVALID_VALUE;
  uint64_t seq = 0;
  if (CUresult rc = enqueue(
          ctx, nullptr,
          [=](CUctx_st& c) {
            uint8_t* p = device_bytes(c, dstDevice, N * 4);
            if (!p) return CUDA_ERROR_ILLEGAL_ADDRESS;
            for (size_t i = 0; i < N; ++i) std::memcpy(p + 4 * i, &ui, 4);
            apply_stuck_bits(c);
            spend_gpu_time(c, 5e-6 + 4.0 * static_cast<double>(N) /
                                         c.dev->model.mem_bytes_per_s);
            return CUDA_SUCCESS;
          },
          &seq);
      rc != CUDA_SUCCESS)
    return rc;
  return wait_for(*ctx,
                  seq);  // synchronous with respect to the host, as documented
}

// ---- modules and launches
// ---------------------------------------------------------

FAKE_EXPORT CUresult cuModuleLoadDataEx(CUmodule* module, const void* image,
                                        unsigned int numOptions,
                                        CUjit_option* options,
                                        void** optionValues) {
  if (!module || !image || (numOptions && (!options || !optionValues)))
    return CUDA_ERROR_INVALID_VALUE;
  CUctx_st* ctx = nullptr;
  if (CUresult rc = require_context(&ctx); rc != CUDA_SUCCESS) return rc;
  char* error_log = nullptr;
  size_t error_log_size = 0;
  for (unsigned i = 0; i < numOptions; ++i) {
    if (options[i] == CU_JIT_ERROR_LOG_BUFFER)
      error_log = static_cast<char*>(optionValues[i]);
    if (options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
      error_log_size = reinterpret_cast<uintptr_t>(optionValues[i]);
  }
  auto fail = [&](CUresult rc, const std::string& why) {
    if (error_log && error_log_size)
      std::snprintf(error_log, error_log_size, "%s", why.c_str());
    return rc;
  };
  std::string log;
  const char* text = static_cast<const char*>(image);
  auto ptx = parse_ptx(text, &log);
  if (!ptx) return fail(CUDA_ERROR_INVALID_PTX, log);
  const DeviceModel& m = ctx->dev->model;
  if (ptx->target_sm > m.cc_major * 10 + m.cc_minor)
    return fail(CUDA_ERROR_INVALID_PTX,
                "ptxas application ptx input: fatal: SM version specified by "
                ".target (sm_" +
                    std::to_string(ptx->target_sm) +
                    ") is higher than the GPU's");
  if (ptx->version_major > 8)
    return fail(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "PTX ISA too new");
  auto mod = std::make_unique<CUmod_st>();
  mod->ctx = ctx;
  for (const auto& e : ptx->entries) {
    auto f = std::make_unique<CUfunc_st>();
    f->module = mod.get();
    f->entry = e;
    f->kernel = find_kernel(e.name);
    if (f->kernel) {
      // The CPU version must take what the PTX entry takes.
      bool same = f->kernel->params.size() == e.params.size();
      for (size_t i = 0; same && i < e.params.size(); ++i)
        same = param_size(e.params[i]) == param_size(f->kernel->params[i]);
      if (!same)
        return fail(CUDA_ERROR_INVALID_PTX,
                    "fake libcuda: the parameters of " + e.name +
                        " in the PTX differ from its CPU version's");
    }
    mod->functions.push_back(std::move(f));
  }
  CUmod_st* raw = mod.release();
  Driver& drv = driver();
  std::lock_guard<std::mutex> lock(drv.mu);
  drv.modules.insert(raw);
  *module = raw;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuModuleLoadData(CUmodule* module, const void* image) {
  return cuModuleLoadDataEx(module, image, 0, nullptr, nullptr);
}

FAKE_EXPORT CUresult cuModuleGetFunction(CUfunction* hfunc, CUmodule hmod,
                                         const char* name) {
  if (!hfunc || !name) return CUDA_ERROR_INVALID_VALUE;
  CUctx_st* ctx = nullptr;
  if (CUresult rc = require_context(&ctx); rc != CUDA_SUCCESS) return rc;
  Driver& drv = driver();
  std::lock_guard<std::mutex> lock(drv.mu);
  if (!drv.modules.count(hmod) || hmod->ctx != ctx)
    return CUDA_ERROR_INVALID_HANDLE;
  for (const auto& f : hmod->functions)
    if (f->entry.name == name) {
      *hfunc = f.get();
      return CUDA_SUCCESS;
    }
  return CUDA_ERROR_NOT_FOUND;
}

FAKE_EXPORT CUresult cuModuleUnload(CUmodule hmod) {
  if (CUresult rc = require_init(); rc != CUDA_SUCCESS) return rc;
  Driver& drv = driver();
  std::lock_guard<std::mutex> lock(drv.mu);
  if (!drv.modules.erase(hmod)) return CUDA_ERROR_INVALID_HANDLE;
  delete hmod;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuLaunchKernel(
    CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
    unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
    unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
    void** kernelParams, void** extra) {
  CUctx_st* ctx = nullptr;
  if (CUresult rc = require_context(&ctx); rc != CUDA_SUCCESS) return rc;
  {
    Driver& drv = driver();
    std::lock_guard<std::mutex> lock(drv.mu);
    if (!f || !drv.modules.count(f->module) || f->module->ctx != ctx)
      return CUDA_ERROR_INVALID_HANDLE;
  }
  if (!stream_ok(ctx, hStream)) return CUDA_ERROR_INVALID_HANDLE;
  if (!gridDimX || !gridDimY || !gridDimZ || !blockDimX || !blockDimY ||
      !blockDimZ || gridDimY > 65535 || gridDimZ > 65535 ||
      gridDimX > 2147483647u ||
      uint64_t{blockDimX} * blockDimY * blockDimZ > 1024 || blockDimZ > 64 ||
      sharedMemBytes > 49152)
    return CUDA_ERROR_INVALID_VALUE;
  if (extra)
    return CUDA_ERROR_NOT_SUPPORTED;  // CU_LAUNCH_PARAM_* is not modelled
  const auto& params = f->entry.params;
  if (!params.empty() && !kernelParams) return CUDA_ERROR_INVALID_VALUE;
  if (!f->kernel) {
    std::fprintf(stderr, "fake libcuda: no CPU version of kernel %s\n",
                 f->entry.name.c_str());
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  // The arguments are read now, as the driver does (the caller may reuse them).
  std::vector<uint64_t> args(params.size(), 0);
  for (size_t i = 0; i < params.size(); ++i) {
    if (!kernelParams[i]) return CUDA_ERROR_INVALID_VALUE;
    std::memcpy(&args[i], kernelParams[i], param_size(params[i]));
  }
  const uint64_t threads = uint64_t{gridDimX} * gridDimY * gridDimZ *
                           blockDimX * blockDimY * blockDimZ;
  const CpuKernel* kernel = f->kernel;
  return enqueue(ctx, hStream, [kernel, threads, args](CUctx_st& c) {
    KernelFaults faults;
    faults.compute_errors_left = &c.dev->compute_errors_left;
    KernelWork w = kernel->run(c, threads, args.data(), faults);
    if (w.rc != 0) return static_cast<CUresult>(w.rc);
    apply_stuck_bits(c);
    const DeviceModel& m = c.dev->model;
    spend_gpu_time(c, 5e-6 + w.fp32_flops / m.fp32_flops +
                          w.fp64_flops / m.fp64_flops +
                          w.mem_bytes / m.mem_bytes_per_s);
    return CUDA_SUCCESS;
  });
}

// ---- streams and events
// -------------------------------------------------------------

FAKE_EXPORT CUresult cuStreamCreate(CUstream* phStream, unsigned int Flags) {
  if (!phStream || (Flags & ~0x1u)) return CUDA_ERROR_INVALID_VALUE;
  CUctx_st* ctx = nullptr;
  if (CUresult rc = require_context(&ctx); rc != CUDA_SUCCESS) return rc;
  auto* s = new CUstream_st();
  s->ctx = ctx;
  Driver& drv = driver();
  std::lock_guard<std::mutex> lock(drv.mu);
  drv.streams.insert(s);
  *phStream = s;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuStreamDestroy_v2(CUstream hStream) {
  if (CUresult rc = require_init(); rc != CUDA_SUCCESS) return rc;
  Driver& drv = driver();
  std::lock_guard<std::mutex> lock(drv.mu);
  if (!hStream || !drv.streams.erase(hStream)) return CUDA_ERROR_INVALID_HANDLE;
  delete hStream;  // work already queued still runs (the context's worker owns
                   // it)
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuStreamSynchronize(CUstream hStream) {
  if (CUresult rc = require_init(); rc != CUDA_SUCCESS) return rc;
  CUctx_st* ctx = current_context();
  if (!ctx) return CUDA_ERROR_INVALID_CONTEXT;
  if (!stream_ok(ctx, hStream)) return CUDA_ERROR_INVALID_HANDLE;
  uint64_t seq;
  {
    std::lock_guard<std::mutex> lock(ctx->mu);
    seq = hStream ? hStream->last_seq : ctx->submitted;
  }
  return wait_for(*ctx, seq);
}

FAKE_EXPORT CUresult cuEventCreate(CUevent* phEvent, unsigned int Flags) {
  if (!phEvent || (Flags & ~0x7u)) return CUDA_ERROR_INVALID_VALUE;
  CUctx_st* ctx = nullptr;
  if (CUresult rc = require_context(&ctx); rc != CUDA_SUCCESS) return rc;
  auto* e = new CUevent_st();
  e->ctx = ctx;
  e->flags = Flags;
  Driver& drv = driver();
  std::lock_guard<std::mutex> lock(drv.mu);
  drv.events.insert(e);
  *phEvent = e;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuEventDestroy_v2(CUevent hEvent) {
  if (CUresult rc = require_init(); rc != CUDA_SUCCESS) return rc;
  Driver& drv = driver();
  std::lock_guard<std::mutex> lock(drv.mu);
  if (!hEvent || !drv.events.erase(hEvent)) return CUDA_ERROR_INVALID_HANDLE;
  // A record still queued refers to it: let the worker find it gone.
  CUctx_st* ctx = hEvent->ctx;
  std::lock_guard<std::mutex> clock(ctx->mu);
  delete hEvent;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuEventRecord(CUevent hEvent, CUstream hStream) {
  CUctx_st* ctx = nullptr;
  if (CUresult rc = require_context(&ctx); rc != CUDA_SUCCESS) return rc;
  if (!event_ok(ctx, hEvent)) return CUDA_ERROR_INVALID_HANDLE;
  if (!stream_ok(ctx, hStream)) return CUDA_ERROR_INVALID_HANDLE;
  CUevent e = hEvent;
  uint64_t seq = 0;
  CUresult rc = enqueue(
      ctx, hStream,
      [e](CUctx_st& c) {
        Driver& drv = driver();
        std::lock_guard<std::mutex> lock(drv.mu);
        if (drv.events.count(e)) e->time_s = c.clock_s;
        return CUDA_SUCCESS;
      },
      &seq);
  if (rc != CUDA_SUCCESS) return rc;
  std::lock_guard<std::mutex> lock(ctx->mu);
  e->recorded = true;
  e->seq = seq;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuEventQuery(CUevent hEvent) {
  if (CUresult rc = require_init(); rc != CUDA_SUCCESS) return rc;
  CUctx_st* ctx = current_context();
  if (!ctx) return CUDA_ERROR_INVALID_CONTEXT;
  if (!event_ok(ctx, hEvent)) return CUDA_ERROR_INVALID_HANDLE;
  std::lock_guard<std::mutex> lock(ctx->mu);
  if (ctx->sticky != CUDA_SUCCESS) return ctx->sticky;
  if (!hEvent->recorded)
    return CUDA_SUCCESS;  // never recorded: nothing to wait for
  return ctx->completed >= hEvent->seq ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

FAKE_EXPORT CUresult cuEventSynchronize(CUevent hEvent) {
  if (CUresult rc = require_init(); rc != CUDA_SUCCESS) return rc;
  CUctx_st* ctx = current_context();
  if (!ctx) return CUDA_ERROR_INVALID_CONTEXT;
  if (!event_ok(ctx, hEvent)) return CUDA_ERROR_INVALID_HANDLE;
  uint64_t seq;
  {
    std::lock_guard<std::mutex> lock(ctx->mu);
    if (!hEvent->recorded) return CUDA_SUCCESS;
    seq = hEvent->seq;
  }
  return wait_for(*ctx, seq);
}

FAKE_EXPORT CUresult cuEventElapsedTime(float* pMilliseconds, CUevent hStart,
                                        CUevent hEnd) {
  if (!pMilliseconds) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult rc = require_init(); rc != CUDA_SUCCESS) return rc;
  CUctx_st* ctx = current_context();
  if (!ctx) return CUDA_ERROR_INVALID_CONTEXT;
  if (!event_ok(ctx, hStart) || !event_ok(ctx, hEnd))
    return CUDA_ERROR_INVALID_HANDLE;
  std::lock_guard<std::mutex> lock(ctx->mu);
  if (ctx->sticky != CUDA_SUCCESS) return ctx->sticky;
  if ((hStart->flags | hEnd->flags) & CU_EVENT_DISABLE_TIMING)
    return CUDA_ERROR_INVALID_HANDLE;
  if (!hStart->recorded || !hEnd->recorded) return CUDA_ERROR_INVALID_HANDLE;
  if (ctx->completed < hStart->seq || ctx->completed < hEnd->seq)
    return CUDA_ERROR_NOT_READY;
  *pMilliseconds = static_cast<float>((hEnd->time_s - hStart->time_s) * 1e3);
  return CUDA_SUCCESS;
}

// ---- errors
// ---------------------------------------------------------------------------

FAKE_EXPORT CUresult cuGetErrorName(CUresult error, const char** pStr) {
  if (!pStr) return CUDA_ERROR_INVALID_VALUE;
  *pStr = error_name(error);
  return *pStr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FAKE_EXPORT CUresult cuGetErrorString(CUresult error, const char** pStr) {
  if (!pStr) return CUDA_ERROR_INVALID_VALUE;
  *pStr = error_string(error);
  return *pStr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

// ---- hooks for the other fakes (fake_cuda_hooks.h)
// ---------------------------------------------

namespace {

// Under drv.mu.
void describe(const Driver& drv, const Device* dev,
              fake_cuda_device_info* info) {
  info->ordinal = -1;
  for (size_t i = 0; i < drv.devices.size(); ++i)
    if (drv.devices[i].get() == dev) info->ordinal = static_cast<int>(i);
  info->nvml_index = dev->model.nvml_index;
  info->mem_bytes_per_s = dev->model.mem_bytes_per_s;
}

// The context of a stream (NULL: the current context's default stream).
CUresult stream_context(CUstream stream, CUctx_st** out) {
  if (CUresult rc = require_init(); rc != CUDA_SUCCESS) return rc;
  if (!stream) {
    *out = current_context();
    return *out ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
  }
  Driver& drv = driver();
  std::lock_guard<std::mutex> lock(drv.mu);
  if (!drv.streams.count(stream)) return CUDA_ERROR_INVALID_HANDLE;
  *out = stream->ctx;
  return CUDA_SUCCESS;
}

}  // namespace

FAKE_EXPORT CUresult fake_cuda_device(CUdevice dev,
                                      fake_cuda_device_info* info) {
  if (!info) return CUDA_ERROR_INVALID_VALUE;
  Device* d = nullptr;
  if (CUresult rc = device_call(dev, &d); rc != CUDA_SUCCESS) return rc;
  Driver& drv = driver();
  std::lock_guard<std::mutex> lock(drv.mu);
  describe(drv, d, info);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult fake_cuda_stream(CUstream stream, CUcontext* pctx,
                                      fake_cuda_device_info* info) {
  CUctx_st* ctx = nullptr;
  if (CUresult rc = stream_context(stream, &ctx); rc != CUDA_SUCCESS) return rc;
  if (pctx) *pctx = ctx;
  if (info) {
    Driver& drv = driver();
    std::lock_guard<std::mutex> lock(drv.mu);
    describe(drv, ctx->dev, info);
  }
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult fake_cuda_enqueue(CUstream stream, fake_cuda_op run,
                                       void* arg, void (*release)(void* arg)) {
  // Owns arg from here on: released when the last copy of the work goes.
  std::shared_ptr<void> held(arg, [release](void* p) {
    if (release) release(p);
  });
  if (!run) return CUDA_ERROR_INVALID_VALUE;
  CUctx_st* ctx = nullptr;
  if (CUresult rc = stream_context(stream, &ctx); rc != CUDA_SUCCESS) return rc;
  return enqueue(ctx, stream, [run, held](CUctx_st& c) {
    CUresult rc = run(&c, held.get());
    if (rc == CUDA_SUCCESS) apply_stuck_bits(c);  // it may have written
    return rc;
  });
}

FAKE_EXPORT void* fake_cuda_device_bytes(CUcontext ctx, CUdeviceptr ptr,
                                         size_t bytes) {
  return ctx ? device_bytes(*ctx, ptr, bytes) : nullptr;
}

FAKE_EXPORT void fake_cuda_spend_gpu_time(CUcontext ctx, double seconds) {
  if (ctx && seconds > 0) spend_gpu_time(*ctx, seconds);
}

FAKE_EXPORT int fake_cuda_stopping(CUcontext ctx) {
  if (!ctx) return 1;
  std::lock_guard<std::mutex> lock(ctx->mu);
  return ctx->stopping ? 1 : 0;
}
