// A clique of the fake libnccl.so.2: the ranks one ncclCommInitAll made, and
// the collectives they run together on the fake GPUs.
//
// Each rank's part of a collective is work queued on the rank's stream (the
// fake libcuda's worker of that context runs it, in order with the stream's
// other work). A part waits for the parts of the same collective (the same
// sequence number of the ranks' communicators) of every other rank, as
// NCCL's kernels wait for their peers; the last to come computes the
// reduction over every rank's send buffer into every rank's receive buffer;
// then each part spends the collective's modelled time on its GPU's clock.
//
// Failures, each of the part's work (a sticky error of its context, as a
// failed kernel's) and of its communicator (ncclCommGetAsyncError):
//  - a peer does not come within the timeout, or its context is destroyed
//    while it waits: CUDA_ERROR_LAUNCH_FAILED, ncclRemoteError, for every
//    part that came (and any that comes later);
//  - a buffer outside the rank's allocations: that rank's part fails with
//    CUDA_ERROR_ILLEGAL_ADDRESS (ncclUnhandledCudaError), its peers' as
//    above;
//  - ranks that disagree on count, type or operation: every part fails with
//    CUDA_ERROR_LAUNCH_FAILED, ncclInvalidUsage.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

// The definitions (api.cc) checked against the project's declarations, and
// the driver's functions declared for calling (the fake links libcuda.so.1).
#define GD_CUDA_DECLARE_PROTOTYPES
#define GD_NCCL_DECLARE_PROTOTYPES
#include "config.h"
#include "cuda/nccl_api.h"

namespace fake_nccl {

struct RankInfo {
  int ordinal = 0;     // CUDA device
  int nvml_index = 0;  // the fake NVML scenario's GPU
  double mem_bytes_per_s = 0;
  GpuFaults faults;
};

// One rank's call of a collective.
struct Call {
  CUdeviceptr send = 0, recv = 0;
  size_t count = 0;
  ncclDataType_t type = ncclFloat32;
  ncclRedOp_t op = ncclSum;
};

// Bytes of one element; 0 for a type the fake does not reduce.
size_t element_size(ncclDataType_t type);
// Whether the fake reduces `type` with `op` (Avg: the float types only).
bool supported(ncclDataType_t type, ncclRedOp_t op);

class Clique {
 public:
  Clique(std::vector<RankInfo> ranks, double bus_bytes_per_s, double timeout_s);
  int size() const { return static_cast<int>(ranks_.size()); }
  const RankInfo& rank(int r) const { return ranks_[static_cast<size_t>(r)]; }

  // Rank r's part of collective `seq`, on the worker of ctx (its context).
  // Returns the part's CUresult; *async the communicator's error, if any.
  CUresult run(int r, uint64_t seq, CUcontext ctx, const Call& call,
               ncclResult_t* async);

 private:
  struct Part {
    bool present = false;  // came and has not left
    Call call;
    uint8_t* send = nullptr;  // host bytes of its buffers (nullptr: illegal)
    uint8_t* recv = nullptr;
  };
  struct Outcome {
    CUresult rc = CUDA_SUCCESS;
    ncclResult_t async = ncclSuccess;
  };
  struct Collective {
    std::vector<Part> parts;
    std::vector<Outcome> outcomes;
    int came = 0, seen = 0;
    bool done = false;    // outcomes set
    bool failed = false;  // a part gave up: every part fails
  };

  // The last part to come: checks the parts and reduces (under mu_).
  void complete(Collective& c);
  double modelled_s(int r, size_t bytes) const;

  const std::vector<RankInfo> ranks_;
  const double bus_bytes_per_s_, timeout_s_;
  double min_speed_ = 1.0;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<uint64_t, Collective> pending_;
};

}  // namespace fake_nccl
