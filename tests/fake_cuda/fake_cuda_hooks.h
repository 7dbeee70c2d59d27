/*
 * The fake libcuda.so.1's own exports beside the CUDA driver API: hooks for
 * the other fakes that play a library running on the GPU (tests/fake_nccl's
 * libnccl.so.2 runs its collectives as work of the fake GPUs). No real driver
 * has them; clients of the driver API never call them.
 *
 * Plain C. The fake libcuda defines them (exported by fake_cuda.map's
 * fake_cuda_*); a fake that links to it declares them by including this.
 */
#ifndef FAKE_CUDA_HOOKS_H
#define FAKE_CUDA_HOOKS_H

#include <stddef.h>

#include "cuda/cuda_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the fake knows of one of its GPUs. */
typedef struct fake_cuda_device_info {
  int ordinal;            /* CUDA's number */
  int nvml_index;         /* the fake NVML scenario's index of the same GPU */
  double mem_bytes_per_s; /* modelled device memory rate, read + write */
} fake_cuda_device_info;

/* The GPU of CUDA ordinal `dev`: CUDA_ERROR_NOT_INITIALIZED before cuInit,
 * CUDA_ERROR_INVALID_DEVICE for a bad ordinal. */
CUresult fake_cuda_device(CUdevice dev, fake_cuda_device_info* info);

/* The context and device of a stream; NULL: the calling thread's current
 * context's default stream (CUDA_ERROR_INVALID_CONTEXT when there is none).
 * The stream's context need not be current. CUDA_ERROR_INVALID_HANDLE for
 * anything but a live stream. */
CUresult fake_cuda_stream(CUstream stream, CUcontext* ctx,
                          fake_cuda_device_info* info);

/* A piece of GPU work: runs on the context's worker (the thread that plays
 * the GPU), in order with the stream's other work. What it returns other than
 * CUDA_SUCCESS becomes the context's sticky error, as a failed kernel's. */
typedef CUresult (*fake_cuda_op)(CUcontext ctx, void* arg);

/* Queues run(ctx, arg) on `stream` (NULL as above). `release(arg)` (when not
 * NULL) is called exactly once: after the work ran, when it is dropped (the
 * context destroyed first, or in an error state when its turn came), or at
 * once when this fails. Returns the context's sticky error if it has one. */
CUresult fake_cuda_enqueue(CUstream stream, fake_cuda_op run, void* arg,
                           void (*release)(void* arg));

/* Device memory of ctx as host bytes: NULL unless [ptr, ptr + bytes) lies in
 * one of ctx's allocations. Valid while the work that asked runs. */
void* fake_cuda_device_bytes(CUcontext ctx, CUdeviceptr ptr, size_t bytes);

/* Advances ctx's modelled GPU clock by `seconds` of work, and makes the
 * running work take at least that long in wall time (worker only). */
void fake_cuda_spend_gpu_time(CUcontext ctx, double seconds);

/* Nonzero once ctx is being destroyed: work that waits for something else
 * (a peer GPU) must then give up and return. */
int fake_cuda_stopping(CUcontext ctx);

#ifdef __cplusplus
}
#endif

#endif /* FAKE_CUDA_HOOKS_H */
