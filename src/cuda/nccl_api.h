/*
 * gpudoctor's own declarations of the part of NCCL (libnccl.so.2) it uses.
 *
 * No NCCL is needed at build or run time: nccl.h is not included and the
 * library is only ever dlopen()ed. Written by the project from public facts
 * of NCCL's API reference (types, enum values, function signatures).
 *
 * Plain C, usable from C and C++:
 *  - the loader (nccl_library.h) uses the `<function>_fn` pointer typedefs;
 *  - the fake libnccl.so.2 (tests/fake_nccl) defines the functions; it
 *    defines GD_NCCL_DECLARE_PROTOTYPES before including this header so the
 *    compiler checks its definitions against these prototypes.
 */
#ifndef GD_NCCL_API_H
#define GD_NCCL_API_H

#include <stddef.h>

#include "cuda/cuda_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A communicator: one rank of a clique, bound to one CUDA device. */
typedef struct ncclComm* ncclComm_t;

typedef enum {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,
  ncclInProgress = 7
} ncclResult_t;

typedef enum {
  ncclInt8 = 0,
  ncclUint8 = 1,
  ncclInt32 = 2,
  ncclUint32 = 3,
  ncclInt64 = 4,
  ncclUint64 = 5,
  ncclFloat16 = 6,
  ncclFloat32 = 7,
  ncclFloat64 = 8,
  ncclBfloat16 = 9
} ncclDataType_t;

typedef enum {
  ncclSum = 0,
  ncclProd = 1,
  ncclMax = 2,
  ncclMin = 3,
  ncclAvg = 4
} ncclRedOp_t;

/* NCCL's version code: major * 10000 + minor * 100 + patch since 2.9
 * (major * 1000 + minor * 100 + patch before). The CUDA runtime's stream
 * type is the driver's (cudaStream_t is CUstream). */
#define GD_NCCL_FUNCTIONS(X)                                                  \
  X(ncclGetVersion, (int* version))                                           \
  X(ncclCommInitAll, (ncclComm_t * comms, int ndev, const int* devlist))      \
  X(ncclCommDestroy, (ncclComm_t comm))                                       \
  X(ncclCommGetAsyncError, (ncclComm_t comm, ncclResult_t * asyncError))      \
  X(ncclGroupStart, (void))                                                   \
  X(ncclGroupEnd, (void))                                                     \
  X(ncclAllReduce, (const void* sendbuff, void* recvbuff, size_t count,       \
                    ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, \
                    CUstream stream))

#define GD_NCCL_DECLARE_FN_TYPE(name, params) \
  typedef ncclResult_t(*name##_fn) params;
GD_NCCL_FUNCTIONS(GD_NCCL_DECLARE_FN_TYPE)
#undef GD_NCCL_DECLARE_FN_TYPE
/* Not an ncclResult_t: declared apart. */
typedef const char* (*ncclGetErrorString_fn)(ncclResult_t result);

#ifdef GD_NCCL_DECLARE_PROTOTYPES
#define GD_NCCL_DECLARE_PROTOTYPE(name, params) ncclResult_t name params;
GD_NCCL_FUNCTIONS(GD_NCCL_DECLARE_PROTOTYPE)
#undef GD_NCCL_DECLARE_PROTOTYPE
const char* ncclGetErrorString(ncclResult_t result);
#endif

#ifdef __cplusplus
}
#endif

#endif /* GD_NCCL_API_H */
