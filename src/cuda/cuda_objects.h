// The CUDA driver objects the project uses, each owning its handle (freed in
// its destructor, errors there ignored: a context in a sticky error state
// still has to let go), plus what a device says about itself.
//
// Context rules (the driver's): a context is current on one thread at a time
// here; every object below is created and destroyed on the thread where its
// context is current.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cuda/cuda_library.h"

namespace gd::cuda {

struct DeviceFacts {
  int ordinal = 0;         // CUDA's number (not NVML's index)
  std::string name;        // "NVIDIA A100-SXM4-80GB"
  std::string pci_bus_id;  // canonical "0000:07:00.0" ("" unknown)
  uint64_t total_bytes = 0;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int clock_khz = 0;  // maximum SM clock
  int max_threads_per_sm = 0;
  int max_threads_per_block = 0;
  int mem_clock_khz = 0;       // 0 unknown
  int mem_bus_width_bits = 0;  // 0 unknown
  std::optional<bool> ecc_enabled;
};

// cuInit(0) then every device the driver lists (after CUDA_VISIBLE_DEVICES).
// Throws CudaError (CUDA_ERROR_NO_DEVICE when there are none).
std::vector<DeviceFacts> list_devices(const CudaLibrary& lib);

class Context {
 public:
  // Creates a context on `device` and makes it current on this thread.
  // Blocking sync: a thread waiting for the GPU sleeps instead of spinning.
  Context(const CudaLibrary& lib, int ordinal,
          unsigned flags = CU_CTX_SCHED_BLOCKING_SYNC);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  CUcontext get() const { return ctx_; }
  void synchronize() const;

 private:
  const CudaLibrary& lib_;
  CUcontext ctx_ = nullptr;
};

class DeviceMemory {
 public:
  DeviceMemory(const CudaLibrary& lib, size_t bytes);
  ~DeviceMemory();
  DeviceMemory(DeviceMemory&& other) noexcept;
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  CUdeviceptr get() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  const CudaLibrary* lib_;
  CUdeviceptr ptr_ = 0;
  size_t bytes_ = 0;
};

// Page-locked host memory: copies from it run at the link's rate.
class PinnedMemory {
 public:
  PinnedMemory(const CudaLibrary& lib, size_t bytes);
  ~PinnedMemory();
  PinnedMemory(const PinnedMemory&) = delete;
  PinnedMemory& operator=(const PinnedMemory&) = delete;
  void* get() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  const CudaLibrary& lib_;
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

class Stream {
 public:
  explicit Stream(const CudaLibrary& lib);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  CUstream get() const { return stream_; }
  void synchronize() const;

 private:
  const CudaLibrary& lib_;
  CUstream stream_ = nullptr;
};

// A timing event (blocking sync: waiting on it sleeps).
class Event {
 public:
  explicit Event(const CudaLibrary& lib);
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  CUevent get() const { return event_; }
  void record(const Stream& stream) const;
  void synchronize() const;
  // True once the work before the record has finished; throws on an error.
  bool done() const;
  // Milliseconds of GPU time from `start` to this event (both finished).
  double ms_since(const Event& start) const;

 private:
  const CudaLibrary& lib_;
  CUevent event_ = nullptr;
};

class Module {
 public:
  // JIT-compiles PTX text. On failure the CudaError names the driver's JIT
  // log (what in the PTX it rejected).
  Module(const CudaLibrary& lib, const std::string& ptx);
  ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  CUfunction function(const char* name) const;

 private:
  const CudaLibrary& lib_;
  CUmodule module_ = nullptr;
};

// cuLaunchKernel with a 1-D grid; `args` are the kernel's parameters in
// order, each passed by address as the driver expects.
template <typename... Args>
void launch(const CudaLibrary& lib, CUfunction f, unsigned grid, unsigned block,
            const Stream& stream, Args... args) {
  void* params[] = {static_cast<void*>(&args)..., nullptr};
  GD_CU(lib, cuLaunchKernel, f, grid, 1u, 1u, block, 1u, 1u, 0u, stream.get(),
        params, static_cast<void**>(nullptr));
}

}  // namespace gd::cuda
