/*
 * gpudoctor's own declarations of the part of the CUDA driver API it uses.
 *
 * No CUDA toolkit is needed at build or run time: cuda.h is not included and
 * libcuda.so.1 is only ever dlopen()ed. These declarations are written by the
 * project from public facts of the CUDA driver API reference (types, enum
 * values, function signatures). Where the driver exports a versioned entry
 * point for a function (cuCtxCreate -> cuCtxCreate_v2 since CUDA 3.2/4.0),
 * the versioned symbol is declared: cuda.h maps the plain name to it, and
 * the plain name, where still exported, is the old ABI (32-bit sizes).
 *
 * Plain C, usable from C and C++:
 *  - the loader (cuda_library.h) uses the `<function>_fn` pointer typedefs;
 *  - the fake libcuda.so.1 (tests/fake_cuda) defines the functions; it
 *    defines GD_CUDA_DECLARE_PROTOTYPES before including this header so the
 *    compiler checks its definitions against these prototypes.
 */
#ifndef GD_CUDA_API_H
#define GD_CUDA_API_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- handles -------------------------------------------------------------*/

typedef int CUdevice;                   /* an ordinal, not a pointer */
typedef unsigned long long CUdeviceptr; /* 64-bit on every 64-bit host */
typedef struct CUctx_st* CUcontext;
typedef struct CUmod_st* CUmodule;
typedef struct CUfunc_st* CUfunction;
typedef struct CUstream_st* CUstream; /* NULL: the legacy default stream */
typedef struct CUevent_st* CUevent;

/* ---- return codes (CUresult) ---------------------------------------------*/

typedef enum cudaError_enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_DEINITIALIZED = 4,
  CUDA_ERROR_STUB_LIBRARY = 34,
  CUDA_ERROR_DEVICE_UNAVAILABLE = 46,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_INVALID_IMAGE = 200,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
  CUDA_ERROR_ECC_UNCORRECTABLE = 214,
  CUDA_ERROR_INVALID_PTX = 218,
  CUDA_ERROR_NVLINK_UNCORRECTABLE = 220,
  CUDA_ERROR_JIT_COMPILER_NOT_FOUND = 221,
  CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
  CUDA_ERROR_INVALID_HANDLE = 400,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_NOT_READY = 600,
  CUDA_ERROR_ILLEGAL_ADDRESS = 700,
  CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
  CUDA_ERROR_LAUNCH_TIMEOUT = 702,
  CUDA_ERROR_CONTEXT_IS_DESTROYED = 709,
  CUDA_ERROR_HARDWARE_STACK_ERROR = 714,
  CUDA_ERROR_ILLEGAL_INSTRUCTION = 715,
  CUDA_ERROR_MISALIGNED_ADDRESS = 716,
  CUDA_ERROR_LAUNCH_FAILED = 719,
  CUDA_ERROR_NOT_PERMITTED = 800,
  CUDA_ERROR_NOT_SUPPORTED = 801,
  CUDA_ERROR_SYSTEM_DRIVER_MISMATCH = 803,
  CUDA_ERROR_UNKNOWN = 999
} CUresult;

/* ---- device attributes (cuDeviceGetAttribute) ----------------------------*/

typedef enum CUdevice_attribute_enum {
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
  CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10,
  CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13, /* kHz */
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_ECC_ENABLED = 32,
  CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33,
  CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 34,
  CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36,       /* kHz */
  CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37, /* bits */
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39,
  CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT = 40,
  CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING = 41,
  CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID = 50,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76
} CUdevice_attribute;

/* ---- JIT options (cuModuleLoadDataEx) ------------------------------------*/

typedef enum CUjit_option_enum {
  CU_JIT_MAX_REGISTERS = 0,
  CU_JIT_THREADS_PER_BLOCK = 1,
  CU_JIT_WALL_TIME = 2,
  CU_JIT_INFO_LOG_BUFFER = 3,
  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
  CU_JIT_OPTIMIZATION_LEVEL = 7
} CUjit_option;

/* ---- flags ---------------------------------------------------------------*/

/* cuCtxCreate: how a thread waits for the GPU. Blocking sync sleeps in the
 * kernel instead of spinning a CPU core while a kernel runs. */
#define CU_CTX_SCHED_AUTO 0x00
#define CU_CTX_SCHED_SPIN 0x01
#define CU_CTX_SCHED_YIELD 0x02
#define CU_CTX_SCHED_BLOCKING_SYNC 0x04
/* cuMemHostAlloc */
#define CU_MEMHOSTALLOC_PORTABLE 0x01
#define CU_MEMHOSTALLOC_DEVICEMAP 0x02
#define CU_MEMHOSTALLOC_WRITECOMBINED 0x04
/* cuStreamCreate */
#define CU_STREAM_DEFAULT 0x0
#define CU_STREAM_NON_BLOCKING 0x1
/* cuEventCreate */
#define CU_EVENT_DEFAULT 0x0
#define CU_EVENT_BLOCKING_SYNC 0x1
#define CU_EVENT_DISABLE_TIMING 0x2

/* ---- functions -----------------------------------------------------------
 * X(symbol, parameters): the exported symbol and its parameter list. */
#define GD_CUDA_FUNCTIONS(X)                                                   \
  X(cuInit, (unsigned int Flags))                                              \
  X(cuDriverGetVersion, (int* driverVersion))                                  \
  X(cuDeviceGetCount, (int* count))                                            \
  X(cuDeviceGet, (CUdevice * device, int ordinal))                             \
  X(cuDeviceGetName, (char* name, int len, CUdevice dev))                      \
  X(cuDeviceGetAttribute, (int* pi, CUdevice_attribute attrib, CUdevice dev))  \
  X(cuDeviceTotalMem_v2, (size_t * bytes, CUdevice dev))                       \
  X(cuDeviceGetPCIBusId, (char* pciBusId, int len, CUdevice dev))              \
  X(cuCtxCreate_v2, (CUcontext * pctx, unsigned int flags, CUdevice dev))      \
  X(cuCtxDestroy_v2, (CUcontext ctx))                                          \
  X(cuDevicePrimaryCtxRetain, (CUcontext * pctx, CUdevice dev))                \
  X(cuDevicePrimaryCtxRelease_v2, (CUdevice dev))                              \
  X(cuCtxSetCurrent, (CUcontext ctx))                                          \
  X(cuCtxGetCurrent, (CUcontext * pctx))                                       \
  X(cuCtxSynchronize, (void))                                                  \
  X(cuMemGetInfo_v2, (size_t * free, size_t * total))                          \
  X(cuMemAlloc_v2, (CUdeviceptr * dptr, size_t bytesize))                      \
  X(cuMemFree_v2, (CUdeviceptr dptr))                                          \
  X(cuMemHostAlloc, (void** pp, size_t bytesize, unsigned int Flags))          \
  X(cuMemFreeHost, (void* p))                                                  \
  X(cuMemcpyHtoD_v2,                                                           \
    (CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount))            \
  X(cuMemcpyDtoH_v2, (void* dstHost, CUdeviceptr srcDevice, size_t ByteCount)) \
  X(cuMemcpyHtoDAsync_v2, (CUdeviceptr dstDevice, const void* srcHost,         \
                           size_t ByteCount, CUstream hStream))                \
  X(cuMemcpyDtoHAsync_v2, (void* dstHost, CUdeviceptr srcDevice,               \
                           size_t ByteCount, CUstream hStream))                \
  X(cuMemsetD32_v2, (CUdeviceptr dstDevice, unsigned int ui, size_t N))        \
  X(cuModuleLoadData, (CUmodule * module, const void* image))                  \
  X(cuModuleLoadDataEx,                                                        \
    (CUmodule * module, const void* image, unsigned int numOptions,            \
     CUjit_option* options, void** optionValues))                              \
  X(cuModuleGetFunction,                                                       \
    (CUfunction * hfunc, CUmodule hmod, const char* name))                     \
  X(cuModuleUnload, (CUmodule hmod))                                           \
  X(cuLaunchKernel,                                                            \
    (CUfunction f, unsigned int gridDimX, unsigned int gridDimY,               \
     unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,    \
     unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,    \
     void** kernelParams, void** extra))                                       \
  X(cuStreamCreate, (CUstream * phStream, unsigned int Flags))                 \
  X(cuStreamDestroy_v2, (CUstream hStream))                                    \
  X(cuStreamSynchronize, (CUstream hStream))                                   \
  X(cuEventCreate, (CUevent * phEvent, unsigned int Flags))                    \
  X(cuEventDestroy_v2, (CUevent hEvent))                                       \
  X(cuEventRecord, (CUevent hEvent, CUstream hStream))                         \
  X(cuEventQuery, (CUevent hEvent))                                            \
  X(cuEventSynchronize, (CUevent hEvent))                                      \
  X(cuEventElapsedTime, (float* pMilliseconds, CUevent hStart, CUevent hEnd))  \
  X(cuGetErrorName, (CUresult error, const char** pStr))                       \
  X(cuGetErrorString, (CUresult error, const char** pStr))

#define GD_CUDA_DECLARE_FN_TYPE(name, params) \
  typedef CUresult(*name##_fn) params;
GD_CUDA_FUNCTIONS(GD_CUDA_DECLARE_FN_TYPE)
#undef GD_CUDA_DECLARE_FN_TYPE

#ifdef GD_CUDA_DECLARE_PROTOTYPES
#define GD_CUDA_DECLARE_PROTOTYPE(name, params) CUresult name params;
GD_CUDA_FUNCTIONS(GD_CUDA_DECLARE_PROTOTYPE)
#undef GD_CUDA_DECLARE_PROTOTYPE
#endif

#ifdef __cplusplus
}
#endif

#endif /* GD_CUDA_API_H */
