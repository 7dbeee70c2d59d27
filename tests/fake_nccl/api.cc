// The NCCL functions the fake libnccl.so.2 exports (nccl_api.h's list, with
// the real symbols' names and signatures; the prototypes are checked against
// the project's declarations): NCCL as a single process uses it (nccl-tests'
// all_reduce_perf -g N), one thread driving every GPU of a clique that
// ncclCommInitAll made, its all-reduces running as work of the fake
// libcuda's GPUs (clique.h). Configured by the environment (config.h).
//
// Rules it keeps as the real library does:
//  - ncclCommInitAll(comms, n, devlist): n >= 1 distinct valid CUDA ordinals
//    (NULL devlist: 0..n-1), else ncclInvalidArgument; it initialises the
//    driver if the client has not;
//  - ncclGroupStart / ncclGroupEnd nest per thread; an end without a start is
//    ncclInvalidUsage. A collective is queued on its stream when called
//    (inside a group too: each rank's stream keeps its order, and no rank
//    waits for another on the host);
//  - ncclAllReduce: Sum, Prod, Max, Min of int32, uint32, int64, uint64,
//    float32, float64 and Avg of the float types (the fake models no others:
//    ncclInvalidArgument), in place or not; the stream must be one of a
//    context on the communicator's device (NULL: the calling thread's
//    current context's default stream), else ncclInvalidArgument; a NULL
//    buffer (count > 0) is ncclInvalidArgument, one outside the context's
//    allocations fails on the GPU (CUDA_ERROR_ILLEGAL_ADDRESS, sticky);
//  - once a communicator's work has failed (ncclCommGetAsyncError), its
//    collectives return that error.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <mutex>
#include <set>

#include "clique.h"
#include "fake_cuda_hooks.h"

#define FAKE_NCCL_EXPORT extern "C" __attribute__((visibility("default")))

struct ncclComm {
  std::shared_ptr<fake_nccl::Clique> clique;
  int rank = 0;
  int ordinal = 0;        // CUDA device
  uint64_t next_seq = 0;  // its next collective's sequence number
  // ncclResult_t of its failed work; shared with its queued work.
  std::shared_ptr<std::atomic<int>> async;
};

namespace fake_nccl {

namespace {

constexpr int kNcclVersion = 22105;  // 2.21.5

thread_local int t_group_depth = 0;

// The live communicators (never destroyed: queued work may outlive exit).
std::mutex& comms_mu() {
  static auto* mu = new std::mutex();
  return *mu;
}
std::set<ncclComm*>& live_comms() {
  static auto* comms = new std::set<ncclComm*>();
  return *comms;
}

bool live(ncclComm_t comm) {
  std::lock_guard<std::mutex> lock(comms_mu());
  return comm && live_comms().count(comm);
}

// One rank's part of one collective, queued on its stream.
struct Work {
  std::shared_ptr<Clique> clique;
  std::shared_ptr<std::atomic<int>> async;
  int rank = 0;
  uint64_t seq = 0;
  Call call;
};

CUresult run_work(CUcontext ctx, void* arg) {
  auto* w = static_cast<Work*>(arg);
  ncclResult_t async = ncclSuccess;
  const CUresult rc = w->clique->run(w->rank, w->seq, ctx, w->call, &async);
  if (async != ncclSuccess) {
    int none = ncclSuccess;  // the first error stays
    w->async->compare_exchange_strong(none, async);
  }
  return rc;
}

void release_work(void* arg) { delete static_cast<Work*>(arg); }

}  // namespace

}  // namespace fake_nccl

using fake_nccl::Clique;

FAKE_NCCL_EXPORT ncclResult_t ncclGetVersion(int* version) {
  if (!version) return ncclInvalidArgument;
  *version = fake_nccl::kNcclVersion;
  return ncclSuccess;
}

FAKE_NCCL_EXPORT ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev,
                                              const int* devlist) {
  if (!comms || ndev < 1) return ncclInvalidArgument;
  fake_nccl::Config config;
  try {
    config = fake_nccl::load_config();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fake libnccl: %s\n", e.what());
    return ncclInvalidArgument;
  }
  int count = 0;
  if (cuInit(0) != CUDA_SUCCESS || cuDeviceGetCount(&count) != CUDA_SUCCESS)
    return ncclUnhandledCudaError;
  std::vector<fake_nccl::RankInfo> ranks;
  std::set<int> ordinals;
  for (int i = 0; i < ndev; ++i) {
    const int ordinal = devlist ? devlist[i] : i;
    if (ordinal < 0 || ordinal >= count || !ordinals.insert(ordinal).second)
      return ncclInvalidArgument;
    fake_cuda_device_info info;
    if (fake_cuda_device(ordinal, &info) != CUDA_SUCCESS)
      return ncclUnhandledCudaError;
    fake_nccl::RankInfo r;
    r.ordinal = ordinal;
    r.nvml_index = info.nvml_index;
    r.mem_bytes_per_s = info.mem_bytes_per_s;
    r.faults = config.for_gpu(info.nvml_index);
    ranks.push_back(r);
  }
  for (const auto& r : ranks)
    if (r.faults.init_error)
      return static_cast<ncclResult_t>(*r.faults.init_error);
  auto clique = std::make_shared<Clique>(
      std::move(ranks), config.bus_bytes_per_s, config.timeout_s);
  std::lock_guard<std::mutex> lock(fake_nccl::comms_mu());
  for (int i = 0; i < ndev; ++i) {
    auto* comm = new ncclComm();
    comm->clique = clique;
    comm->rank = i;
    comm->ordinal = clique->rank(i).ordinal;
    comm->async = std::make_shared<std::atomic<int>>(ncclSuccess);
    fake_nccl::live_comms().insert(comm);
    comms[i] = comm;
  }
  return ncclSuccess;
}

FAKE_NCCL_EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  {
    std::lock_guard<std::mutex> lock(fake_nccl::comms_mu());
    if (!comm || !fake_nccl::live_comms().erase(comm))
      return ncclInvalidArgument;
  }
  delete comm;  // its queued work keeps what it needs
  return ncclSuccess;
}

FAKE_NCCL_EXPORT ncclResult_t ncclCommGetAsyncError(ncclComm_t comm,
                                                    ncclResult_t* asyncError) {
  if (!asyncError || !fake_nccl::live(comm)) return ncclInvalidArgument;
  *asyncError = static_cast<ncclResult_t>(comm->async->load());
  return ncclSuccess;
}

FAKE_NCCL_EXPORT ncclResult_t ncclGroupStart(void) {
  ++fake_nccl::t_group_depth;
  return ncclSuccess;
}

FAKE_NCCL_EXPORT ncclResult_t ncclGroupEnd(void) {
  if (fake_nccl::t_group_depth == 0) return ncclInvalidUsage;
  --fake_nccl::t_group_depth;
  return ncclSuccess;
}

FAKE_NCCL_EXPORT ncclResult_t ncclAllReduce(const void* sendbuff,
                                            void* recvbuff, size_t count,
                                            ncclDataType_t datatype,
                                            ncclRedOp_t op, ncclComm_t comm,
                                            CUstream stream) {
  if (!fake_nccl::live(comm) || !fake_nccl::supported(datatype, op))
    return ncclInvalidArgument;
  if (count == 0) return ncclSuccess;  // nothing to run, as NCCL does
  if (!sendbuff || !recvbuff ||
      count > SIZE_MAX / fake_nccl::element_size(datatype))
    return ncclInvalidArgument;
  if (const int async = comm->async->load(); async != ncclSuccess)
    return static_cast<ncclResult_t>(async);
  fake_cuda_device_info info;
  if (fake_cuda_stream(stream, nullptr, &info) != CUDA_SUCCESS ||
      info.ordinal != comm->ordinal)
    return ncclInvalidArgument;
  auto* work = new fake_nccl::Work();
  work->clique = comm->clique;
  work->async = comm->async;
  work->rank = comm->rank;
  work->seq = comm->next_seq;
  work->call.send = reinterpret_cast<uintptr_t>(sendbuff);
  work->call.recv = reinterpret_cast<uintptr_t>(recvbuff);
  work->call.count = count;
  work->call.type = datatype;
  work->call.op = op;
  // A context in an error state takes no more work (a failed launch).
  if (fake_cuda_enqueue(stream, fake_nccl::run_work, work,
                        fake_nccl::release_work) != CUDA_SUCCESS)
    return ncclUnhandledCudaError;
  ++comm->next_seq;
  return ncclSuccess;
}

FAKE_NCCL_EXPORT const char* ncclGetErrorString(ncclResult_t result) {
  switch (static_cast<int>(result)) {
    case ncclSuccess:
      return "no error";
    case ncclUnhandledCudaError:
      return "unhandled cuda error";
    case ncclSystemError:
      return "unhandled system error";
    case ncclInternalError:
      return "internal error";
    case ncclInvalidArgument:
      return "invalid argument";
    case ncclInvalidUsage:
      return "invalid usage";
    case ncclRemoteError:
      return "remote process exited or there was a network error";
    case ncclInProgress:
      return "NCCL operation in progress";
    default:
      return "unknown result code";
  }
}
