#include "cuda/cuda_objects.h"

#include <array>
#include <cstdint>

#include "common/pci_bus_id.h"

namespace gd::cuda {

namespace {

int attribute(const CudaLibrary& lib, CUdevice dev, CUdevice_attribute a) {
  int v = 0;
  if (!lib.fn().cuDeviceGetAttribute ||
      lib.fn().cuDeviceGetAttribute(&v, a, dev) != CUDA_SUCCESS)
    return 0;
  return v;
}

}  // namespace

std::vector<DeviceFacts> list_devices(const CudaLibrary& lib) {
  GD_CU(lib, cuInit, 0u);
  int count = 0;
  GD_CU(lib, cuDeviceGetCount, &count);
  std::vector<DeviceFacts> out;
  for (int i = 0; i < count; ++i) {
    CUdevice dev = 0;
    GD_CU(lib, cuDeviceGet, &dev, i);
    DeviceFacts f;
    f.ordinal = i;
    std::array<char, 256> name{};
    GD_CU(lib, cuDeviceGetName, name.data(), static_cast<int>(name.size()),
          dev);
    f.name = std::string(name.data());
    std::array<char, 64> bus{};
    if (lib.fn().cuDeviceGetPCIBusId &&
        lib.fn().cuDeviceGetPCIBusId(bus.data(), static_cast<int>(bus.size()),
                                     dev) == CUDA_SUCCESS)
      f.pci_bus_id = canonical_pci_bus_id(bus.data()).value_or("");
    size_t total = 0;
    GD_CU(lib, cuDeviceTotalMem_v2, &total, dev);
    f.total_bytes = total;
    f.cc_major =
        attribute(lib, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    f.cc_minor =
        attribute(lib, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    f.sm_count = attribute(lib, dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    f.clock_khz = attribute(lib, dev, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
    f.max_threads_per_sm =
        attribute(lib, dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
    f.max_threads_per_block =
        attribute(lib, dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    f.mem_clock_khz =
        attribute(lib, dev, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
    f.mem_bus_width_bits =
        attribute(lib, dev, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
    int ecc = 0;
    if (lib.fn().cuDeviceGetAttribute &&
        lib.fn().cuDeviceGetAttribute(&ecc, CU_DEVICE_ATTRIBUTE_ECC_ENABLED,
                                      dev) == CUDA_SUCCESS)
      f.ecc_enabled = ecc != 0;
    out.push_back(std::move(f));
  }
  return out;
}

Context::Context(const CudaLibrary& lib, int ordinal, unsigned flags)
    : lib_(lib) {
  CUdevice dev = 0;
  GD_CU(lib, cuDeviceGet, &dev, ordinal);
  GD_CU(lib, cuCtxCreate_v2, &ctx_, flags, dev);
}

Context::~Context() {
  if (ctx_ && lib_.fn().cuCtxDestroy_v2) lib_.fn().cuCtxDestroy_v2(ctx_);
}

void Context::synchronize() const { GD_CU0(lib_, cuCtxSynchronize); }

DeviceMemory::DeviceMemory(const CudaLibrary& lib, size_t bytes)
    : lib_(&lib), bytes_(bytes) {
  GD_CU(lib, cuMemAlloc_v2, &ptr_, bytes);
}

DeviceMemory::DeviceMemory(DeviceMemory&& other) noexcept
    : lib_(other.lib_), ptr_(other.ptr_), bytes_(other.bytes_) {
  other.ptr_ = 0;
  other.bytes_ = 0;
}

DeviceMemory::~DeviceMemory() {
  if (ptr_ && lib_->fn().cuMemFree_v2) lib_->fn().cuMemFree_v2(ptr_);
}

PinnedMemory::PinnedMemory(const CudaLibrary& lib, size_t bytes)
    : lib_(lib), bytes_(bytes) {
  GD_CU(lib, cuMemHostAlloc, &ptr_, bytes, 0u);
}

PinnedMemory::~PinnedMemory() {
  if (ptr_ && lib_.fn().cuMemFreeHost) lib_.fn().cuMemFreeHost(ptr_);
}

Stream::Stream(const CudaLibrary& lib) : lib_(lib) {
  GD_CU(lib, cuStreamCreate, &stream_,
        static_cast<unsigned>(CU_STREAM_NON_BLOCKING));
}

Stream::~Stream() {
  if (stream_ && lib_.fn().cuStreamDestroy_v2)
    lib_.fn().cuStreamDestroy_v2(stream_);
}

void Stream::synchronize() const { GD_CU(lib_, cuStreamSynchronize, stream_); }

Event::Event(const CudaLibrary& lib) : lib_(lib) {
  GD_CU(lib, cuEventCreate, &event_,
        static_cast<unsigned>(CU_EVENT_BLOCKING_SYNC));
}

Event::~Event() {
  if (event_ && lib_.fn().cuEventDestroy_v2)
    lib_.fn().cuEventDestroy_v2(event_);
}

void Event::record(const Stream& stream) const {
  GD_CU(lib_, cuEventRecord, event_, stream.get());
}

void Event::synchronize() const { GD_CU(lib_, cuEventSynchronize, event_); }

bool Event::done() const {
  if (!lib_.fn().cuEventQuery) CudaLibrary::throw_missing("cuEventQuery");
  CUresult rc = lib_.fn().cuEventQuery(event_);
  if (rc == CUDA_ERROR_NOT_READY) return false;
  lib_.check(rc, "cuEventQuery");
  return true;
}

double Event::ms_since(const Event& start) const {
  float ms = 0;
  GD_CU(lib_, cuEventElapsedTime, &ms, start.event_, event_);
  return ms;
}

Module::Module(const CudaLibrary& lib, const std::string& ptx) : lib_(lib) {
  if (!lib.fn().cuModuleLoadDataEx) {
    GD_CU(lib, cuModuleLoadData, &module_,
          static_cast<const void*>(ptx.c_str()));
    return;
  }
  std::array<char, 8192> log{};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {log.data(), reinterpret_cast<void*>(
                                    static_cast<uintptr_t>(log.size() - 1))};
  CUresult rc =
      lib.fn().cuModuleLoadDataEx(&module_, ptx.c_str(), 2, options, values);
  if (rc != CUDA_SUCCESS) {
    std::string text = lib.error_string(rc);
    if (log[0])
      text +=
          (text.empty() ? "" : "; ") + std::string("JIT log: ") + log.data();
    throw CudaError("cuModuleLoadDataEx", rc, lib.error_name(rc), text);
  }
}

Module::~Module() {
  if (module_ && lib_.fn().cuModuleUnload) lib_.fn().cuModuleUnload(module_);
}

CUfunction Module::function(const char* name) const {
  CUfunction f = nullptr;
  GD_CU(lib_, cuModuleGetFunction, &f, module_, name);
  return f;
}

}  // namespace gd::cuda
