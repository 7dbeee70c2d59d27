// A single-process NCCL client, as nccl-tests' all_reduce_perf -g N is one:
// one clique over the fake GPUs, all-reduces on the clients' streams, timed
// by events with the modelled bus bandwidth; and the library's rules.
#include <chrono>
#include <thread>
#include <type_traits>

#include "nccl_fixture.h"

namespace fake_nccl_test {
namespace {

constexpr double kBusBytesPerS = 240e9;  // FAKE_NCCL_BUS_GBPS's default

// nccl-tests' bus bandwidth: B bytes all-reduced over n ranks move
// B * 2(n-1)/n over each rank's link.
double modelled_ms(size_t bytes, int n, double bus = kBusBytesPerS) {
  return static_cast<double>(bytes) * 2 * (n - 1) / n / bus * 1e3;
}

using FakeNccl = FakeNcclTest;

TEST_F(FakeNccl, FourGpusAllReduceAsAllReducePerfDoes) {
  const std::vector<int> ordinals = {0, 1, 2, 3};
  const size_t count = 1 << 20, bytes = count * 4;
  Gpus gpus(cu(), ordinals, bytes);
  for (size_t r = 0; r < 4; ++r)
    gpus.fill_send(r, float_bits(static_cast<float>(r + 1)));
  auto comms = init_all(ordinals);
  ASSERT_EQ(comms.size(), 4u);
  for (size_t r = 0; r < 4; ++r) gpus.record_start(r);
  ASSERT_EQ(nccl().ncclGroupStart(), ncclSuccess);
  for (size_t r = 0; r < 4; ++r)
    ASSERT_EQ(
        nccl().ncclAllReduce(ptr(gpus[r].send), ptr(gpus[r].recv), count,
                             ncclFloat32, ncclSum, comms[r], gpus[r].stream),
        ncclSuccess);
  ASSERT_EQ(nccl().ncclGroupEnd(), ncclSuccess);
  for (size_t r = 0; r < 4; ++r) gpus.record_end(r);
  for (size_t r = 0; r < 4; ++r) {
    ASSERT_EQ(gpus.sync(r), CUDA_SUCCESS);
    const auto out = gpus.recv<float>(r, count);
    size_t wrong = 0;
    for (float v : out) wrong += v != 10.0f;
    EXPECT_EQ(wrong, 0u) << "rank " << r << ": first " << out[0];
    EXPECT_NEAR(gpus.elapsed_ms(r), modelled_ms(bytes, 4),
                0.1 * modelled_ms(bytes, 4))
        << "rank " << r;
    ncclResult_t async = ncclInternalError;
    EXPECT_EQ(nccl().ncclCommGetAsyncError(comms[r], &async), ncclSuccess);
    EXPECT_EQ(async, ncclSuccess);
  }
}

// Small integers: every type holds them and their sums and products exactly.
template <typename T>
T value(size_t rank, size_t i) {
  if constexpr (std::is_unsigned_v<T>)
    return static_cast<T>(i + rank + 1);
  else
    return static_cast<T>((static_cast<int>(i) - 3) *
                              static_cast<int>(rank + 1) +
                          static_cast<int>(rank));
}

template <typename T>
T expected(ncclRedOp_t op, size_t n, size_t i) {
  T acc = value<T>(0, i);
  for (size_t r = 1; r < n; ++r) {
    const T v = value<T>(r, i);
    switch (op) {
      case ncclProd:
        acc = static_cast<T>(acc * v);
        break;
      case ncclMax:
        acc = v > acc ? v : acc;
        break;
      case ncclMin:
        acc = v < acc ? v : acc;
        break;
      default:
        acc = static_cast<T>(acc + v);
    }
  }
  if (op == ncclAvg) acc = static_cast<T>(acc / static_cast<T>(n));
  return acc;
}

class FakeNcclTypes : public FakeNcclTest {
 protected:
  // Every operation the fake models for T, over three GPUs.
  template <typename T>
  void check_type(ncclDataType_t type) {
    const std::vector<int> ordinals = {0, 2, 3};
    const size_t n = ordinals.size(), count = 9;
    Gpus gpus(cu(), ordinals, count * sizeof(T));
    for (size_t r = 0; r < n; ++r) {
      std::vector<T> host(count);
      for (size_t i = 0; i < count; ++i) host[i] = value<T>(r, i);
      gpus.put_send(r, host);
    }
    auto comms = init_all(ordinals);
    ASSERT_EQ(comms.size(), n);
    std::vector<ncclRedOp_t> ops = {ncclSum, ncclProd, ncclMax, ncclMin};
    if (std::is_floating_point_v<T>) ops.push_back(ncclAvg);
    for (ncclRedOp_t op : ops) {
      ASSERT_EQ(nccl().ncclGroupStart(), ncclSuccess);
      for (size_t r = 0; r < n; ++r)
        ASSERT_EQ(
            nccl().ncclAllReduce(ptr(gpus[r].send), ptr(gpus[r].recv), count,
                                 type, op, comms[r], gpus[r].stream),
            ncclSuccess);
      ASSERT_EQ(nccl().ncclGroupEnd(), ncclSuccess);
      for (size_t r = 0; r < n; ++r) {
        const auto out = gpus.recv<T>(r, count);
        for (size_t i = 0; i < count; ++i)
          EXPECT_EQ(out[i], expected<T>(op, n, i))
              << "type " << type << " op " << op << " rank " << r << " [" << i
              << "]";
      }
    }
    if (!std::is_floating_point_v<T>) {
      EXPECT_EQ(
          nccl().ncclAllReduce(ptr(gpus[0].send), ptr(gpus[0].recv), count,
                               type, ncclAvg, comms[0], gpus[0].stream),
          ncclInvalidArgument);
    }
  }
};

TEST_F(FakeNcclTypes, EveryModelledTypeAndOperation) {
  check_type<float>(ncclFloat32);
  check_type<double>(ncclFloat64);
  check_type<int32_t>(ncclInt32);
  check_type<uint32_t>(ncclUint32);
  check_type<int64_t>(ncclInt64);
  check_type<uint64_t>(ncclUint64);
}

TEST_F(FakeNccl, InPlaceAndInStreamOrder) {
  const std::vector<int> ordinals = {2, 3};
  const size_t count = 4096;
  Gpus gpus(cu(), ordinals, count * 8);
  auto comms = init_all(ordinals);
  ASSERT_EQ(comms.size(), 2u);
  // Asynchronous copies before and after, on the same streams: the
  // all-reduce sees the first and the second sees its result.
  std::vector<std::vector<double>> in(2, std::vector<double>(count)),
      out(2, std::vector<double>(count, -1));
  for (size_t r = 0; r < 2; ++r)
    for (size_t i = 0; i < count; ++i)
      in[r][i] = static_cast<double>(i) * (r == 0 ? 1 : -0.5);
  for (size_t r = 0; r < 2; ++r) {
    gpus.use(r);
    ASSERT_EQ(cu().cuMemcpyHtoDAsync_v2(gpus[r].recv, in[r].data(), count * 8,
                                        gpus[r].stream),
              CUDA_SUCCESS);
  }
  ASSERT_EQ(nccl().ncclGroupStart(), ncclSuccess);
  for (size_t r = 0; r < 2; ++r)
    ASSERT_EQ(
        nccl().ncclAllReduce(ptr(gpus[r].recv), ptr(gpus[r].recv), count,
                             ncclFloat64, ncclMax, comms[r], gpus[r].stream),
        ncclSuccess);
  ASSERT_EQ(nccl().ncclGroupEnd(), ncclSuccess);
  for (size_t r = 0; r < 2; ++r) {
    gpus.use(r);
    ASSERT_EQ(cu().cuMemcpyDtoHAsync_v2(out[r].data(), gpus[r].recv, count * 8,
                                        gpus[r].stream),
              CUDA_SUCCESS);
  }
  for (size_t r = 0; r < 2; ++r) {
    ASSERT_EQ(gpus.sync(r), CUDA_SUCCESS);
    EXPECT_EQ(out[r], in[0]) << "rank " << r;
  }
}

TEST_F(FakeNccl, OneRankIsALocalCopyAtTheGpusMemoryRate) {
  const std::vector<int> ordinals = {ordinal_of(0)};  // an A100
  const size_t count = 1 << 20, bytes = count * 4;
  Gpus gpus(cu(), ordinals, bytes);
  gpus.fill_send(0, 7);
  auto comms = init_all(ordinals);
  ASSERT_EQ(comms.size(), 1u);
  gpus.record_start(0);
  ASSERT_EQ(nccl().ncclAllReduce(ptr(gpus[0].send), ptr(gpus[0].recv), count,
                                 ncclUint32, ncclSum, comms[0], gpus[0].stream),
            ncclSuccess);
  gpus.record_end(0);
  const auto out = gpus.recv<uint32_t>(0, count);
  EXPECT_EQ(out.front(), 7u);
  EXPECT_EQ(out.back(), 7u);
  // The fake A100's memory: 1593 MHz x 2 (DDR) x 5120 bits / 8 x 0.9, read
  // and write.
  const double mem = 1593e6 * 2 * 5120 / 8 * 0.9;
  const double ms = static_cast<double>(bytes) / (mem / 2) * 1e3;
  EXPECT_NEAR(gpus.elapsed_ms(0), ms, 0.1 * ms);
}

TEST_F(FakeNccl, ANullStreamIsTheCurrentContextsDefaultStream) {
  const std::vector<int> ordinals = {0, 1};
  const size_t count = 1000;
  Gpus gpus(cu(), ordinals, count * 4);
  for (size_t r = 0; r < 2; ++r)
    gpus.fill_send(r, static_cast<uint32_t>(r + 5));
  auto comms = init_all(ordinals);
  ASSERT_EQ(comms.size(), 2u);
  ASSERT_EQ(cu().cuCtxSetCurrent(nullptr), CUDA_SUCCESS);
  EXPECT_EQ(nccl().ncclAllReduce(ptr(gpus[0].send), ptr(gpus[0].recv), count,
                                 ncclInt32, ncclSum, comms[0], nullptr),
            ncclInvalidArgument);  // no current context
  gpus.use(1);
  EXPECT_EQ(nccl().ncclAllReduce(ptr(gpus[0].send), ptr(gpus[0].recv), count,
                                 ncclInt32, ncclSum, comms[0], nullptr),
            ncclInvalidArgument);  // the context of another device
  for (size_t r = 0; r < 2; ++r) {
    gpus.use(r);
    ASSERT_EQ(nccl().ncclAllReduce(ptr(gpus[r].send), ptr(gpus[r].recv), count,
                                   ncclInt32, ncclSum, comms[r], nullptr),
              ncclSuccess);
  }
  for (size_t r = 0; r < 2; ++r) {
    gpus.use(r);
    ASSERT_EQ(cu().cuCtxSynchronize(), CUDA_SUCCESS);
    const auto out = gpus.recv<int32_t>(r, count);
    EXPECT_EQ(out.front(), 11);
    EXPECT_EQ(out.back(), 11);
  }
}

TEST_F(FakeNccl, ThreadsDrivingTheirOwnRanksMeetByCallOrder) {
  const std::vector<int> ordinals = {0, 1, 2, 3};
  const size_t count = 1 << 16;
  Gpus gpus(cu(), ordinals, count * 4);
  auto comms = init_all(ordinals);
  ASSERT_EQ(comms.size(), 4u);
  std::vector<std::thread> threads;
  for (size_t r = 0; r < 4; ++r)
    threads.emplace_back([&gpus, &comms, r] {
      for (int iter = 1; iter <= 5; ++iter) {
        gpus.fill_send(r, static_cast<uint32_t>(iter * (r + 1)));
        EXPECT_EQ(
            nccl().ncclAllReduce(ptr(gpus[r].send), ptr(gpus[r].recv), count,
                                 ncclUint32, ncclSum, comms[r], gpus[r].stream),
            ncclSuccess);
        const auto out = gpus.recv<uint32_t>(r, count);
        EXPECT_EQ(out.front(), static_cast<uint32_t>(iter * 10));
        EXPECT_EQ(out.back(), static_cast<uint32_t>(iter * 10));
      }
      EXPECT_EQ(cu().cuCtxSetCurrent(nullptr), CUDA_SUCCESS);
    });
  for (auto& t : threads) t.join();
}

TEST_F(FakeNccl, BadArgumentsAreRejected) {
  int version = 0;
  EXPECT_EQ(nccl().ncclGetVersion(&version), ncclSuccess);
  EXPECT_EQ(version, 22105);
  EXPECT_EQ(nccl().ncclGetVersion(nullptr), ncclInvalidArgument);

  ncclComm_t c[8] = {};
  const int twice[] = {1, 1}, too_high[] = {0, 4}, negative[] = {-1};
  EXPECT_EQ(nccl().ncclCommInitAll(nullptr, 2, nullptr), ncclInvalidArgument);
  EXPECT_EQ(nccl().ncclCommInitAll(c, 0, nullptr), ncclInvalidArgument);
  EXPECT_EQ(nccl().ncclCommInitAll(c, -1, nullptr), ncclInvalidArgument);
  EXPECT_EQ(nccl().ncclCommInitAll(c, 2, twice), ncclInvalidArgument);
  EXPECT_EQ(nccl().ncclCommInitAll(c, 2, too_high), ncclInvalidArgument);
  EXPECT_EQ(nccl().ncclCommInitAll(c, 1, negative), ncclInvalidArgument);
  EXPECT_EQ(nccl().ncclCommInitAll(c, 5, nullptr), ncclInvalidArgument);
  for (ncclComm_t comm : c) EXPECT_EQ(comm, nullptr);

  EXPECT_EQ(nccl().ncclGroupEnd(), ncclInvalidUsage);
  EXPECT_EQ(nccl().ncclGroupStart(), ncclSuccess);
  EXPECT_EQ(nccl().ncclGroupStart(), ncclSuccess);
  EXPECT_EQ(nccl().ncclGroupEnd(), ncclSuccess);
  EXPECT_EQ(nccl().ncclGroupEnd(), ncclSuccess);
  EXPECT_EQ(nccl().ncclGroupEnd(), ncclInvalidUsage);

  const std::vector<int> ordinals = {0, 1};
  const size_t count = 256;
  Gpus gpus(cu(), ordinals, count * 8);
  auto comms = init_all(ordinals);  // devlist NULL: ordinals 0 and 1 too
  ASSERT_EQ(comms.size(), 2u);
  ncclComm_t comm = comms[0];
  void* send = ptr(gpus[0].send);
  void* recv = ptr(gpus[0].recv);
  CUstream s = gpus[0].stream;
  auto all_reduce = [&](ncclDataType_t type, ncclRedOp_t op) {
    return nccl().ncclAllReduce(send, recv, count, type, op, comm, s);
  };
  const int not_modelled[] = {ncclInt8,     ncclUint8, ncclFloat16,
                              ncclBfloat16, 10,        -1};
  for (int type : not_modelled)
    EXPECT_EQ(all_reduce(static_cast<ncclDataType_t>(type), ncclSum),
              ncclInvalidArgument)
        << "type " << type;
  for (int op : {5, -1, 1000})
    EXPECT_EQ(all_reduce(ncclFloat32, static_cast<ncclRedOp_t>(op)),
              ncclInvalidArgument)
        << "op " << op;
  EXPECT_EQ(all_reduce(ncclInt64, ncclAvg), ncclInvalidArgument);
  EXPECT_EQ(
      nccl().ncclAllReduce(nullptr, recv, count, ncclFloat32, ncclSum, comm, s),
      ncclInvalidArgument);
  EXPECT_EQ(
      nccl().ncclAllReduce(send, nullptr, count, ncclFloat32, ncclSum, comm, s),
      ncclInvalidArgument);
  EXPECT_EQ(
      nccl().ncclAllReduce(send, recv, count, ncclFloat32, ncclSum, nullptr, s),
      ncclInvalidArgument);
  // A stream of the other GPU's context, and no stream at all.
  EXPECT_EQ(nccl().ncclAllReduce(send, recv, count, ncclFloat32, ncclSum, comm,
                                 gpus[1].stream),
            ncclInvalidArgument);
  EXPECT_EQ(nccl().ncclAllReduce(send, recv, count, ncclFloat32, ncclSum, comm,
                                 reinterpret_cast<CUstream>(&version)),
            ncclInvalidArgument);
  // Nothing to reduce: nothing runs (no peer is waited for).
  EXPECT_EQ(nccl().ncclAllReduce(send, recv, 0, ncclFloat32, ncclSum, comm, s),
            ncclSuccess);
  EXPECT_EQ(gpus.sync(0), CUDA_SUCCESS);

  ncclResult_t async;
  EXPECT_EQ(nccl().ncclCommGetAsyncError(nullptr, &async), ncclInvalidArgument);
  EXPECT_EQ(nccl().ncclCommGetAsyncError(comm, nullptr), ncclInvalidArgument);
  EXPECT_EQ(nccl().ncclCommDestroy(nullptr), ncclInvalidArgument);
  destroy(comm);
  EXPECT_EQ(nccl().ncclCommDestroy(comm), ncclInvalidArgument);
  EXPECT_EQ(all_reduce(ncclFloat32, ncclSum), ncclInvalidArgument);
  EXPECT_EQ(nccl().ncclCommGetAsyncError(comm, &async), ncclInvalidArgument);
}

TEST_F(FakeNccl, ErrorStrings) {
  const std::map<int, std::string> texts = {
      {ncclSuccess, "no error"},
      {ncclUnhandledCudaError, "unhandled cuda error"},
      {ncclSystemError, "unhandled system error"},
      {ncclInternalError, "internal error"},
      {ncclInvalidArgument, "invalid argument"},
      {ncclInvalidUsage, "invalid usage"},
      {ncclRemoteError, "remote process exited or there was a network error"},
      {ncclInProgress, "NCCL operation in progress"},
      {8, "unknown result code"},
      {-1, "unknown result code"}};
  for (const auto& [code, text] : texts)
    EXPECT_EQ(nccl().ncclGetErrorString(static_cast<ncclResult_t>(code)), text)
        << code;
}

TEST_F(FakeNccl, AMissingRankTimesOutInsteadOfHanging) {
  set_env({{"FAKE_NCCL_TIMEOUT_S", "0.3"}});
  const std::vector<int> ordinals = {0, 1, 2, 3};
  const size_t count = 1024;
  Gpus gpus(cu(), ordinals, count * 4);
  auto comms = init_all(ordinals);
  ASSERT_EQ(comms.size(), 4u);
  const auto t0 = std::chrono::steady_clock::now();
  testing::internal::CaptureStderr();
  for (size_t r = 0; r < 3; ++r)  // rank 3 never calls
    ASSERT_EQ(
        nccl().ncclAllReduce(ptr(gpus[r].send), ptr(gpus[r].recv), count,
                             ncclFloat32, ncclSum, comms[r], gpus[r].stream),
        ncclSuccess);
  for (size_t r = 0; r < 3; ++r) {
    // As after a failed kernel: the context's error is sticky.
    EXPECT_EQ(gpus.sync(r), CUDA_ERROR_LAUNCH_FAILED) << "rank " << r;
    CUdeviceptr p = 0;
    EXPECT_EQ(cu().cuMemAlloc_v2(&p, 512), CUDA_ERROR_LAUNCH_FAILED);
    ncclResult_t async = ncclSuccess;
    EXPECT_EQ(nccl().ncclCommGetAsyncError(comms[r], &async), ncclSuccess);
    EXPECT_EQ(async, ncclRemoteError) << "rank " << r;
  }
  const std::string err = testing::internal::GetCapturedStderr();
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  EXPECT_GE(waited, 0.25);
  EXPECT_LT(waited, 5.0);
  EXPECT_NE(err.find("waited 0.3 s for rank(s) 3"), std::string::npos) << err;
  ncclResult_t async = ncclInternalError;
  EXPECT_EQ(nccl().ncclCommGetAsyncError(comms[3], &async), ncclSuccess);
  EXPECT_EQ(async, ncclSuccess);
  // A broken communicator's later collectives fail at once.
  EXPECT_EQ(
      nccl().ncclAllReduce(ptr(gpus[0].send), ptr(gpus[0].recv), count,
                           ncclFloat32, ncclSum, comms[0], gpus[0].stream),
      ncclRemoteError);
}

TEST_F(FakeNccl, DestroyingAWaitingRanksContextDoesNotHang) {
  const std::vector<int> ordinals = {0, 1};  // the default 20 s timeout
  const size_t count = 1024;
  auto t0 = std::chrono::steady_clock::now();
  {
    Gpus gpus(cu(), ordinals, count * 4);
    auto comms = init_all(ordinals);
    ASSERT_EQ(comms.size(), 2u);
    ASSERT_EQ(
        nccl().ncclAllReduce(ptr(gpus[0].send), ptr(gpus[0].recv), count,
                             ncclFloat32, ncclSum, comms[0], gpus[0].stream),
        ncclSuccess);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    t0 = std::chrono::steady_clock::now();
  }  // the primary contexts released: destroyed, rank 0's part still waiting
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
                .count(),
            2.0);
}

TEST_F(FakeNccl, AnAddressOutsideTheBuffersFailsOnTheGpu) {
  const std::vector<int> ordinals = {2, 3};
  const size_t count = 1024;
  Gpus gpus(cu(), ordinals, count * 4);
  auto comms = init_all(ordinals);
  ASSERT_EQ(comms.size(), 2u);
  // Rank 1's receive buffer runs 4 bytes past its allocation.
  ASSERT_EQ(nccl().ncclGroupStart(), ncclSuccess);
  ASSERT_EQ(
      nccl().ncclAllReduce(ptr(gpus[0].send), ptr(gpus[0].recv), count,
                           ncclFloat32, ncclSum, comms[0], gpus[0].stream),
      ncclSuccess);
  ASSERT_EQ(
      nccl().ncclAllReduce(ptr(gpus[1].send), ptr(gpus[1].recv + 4), count,
                           ncclFloat32, ncclSum, comms[1], gpus[1].stream),
      ncclSuccess);
  ASSERT_EQ(nccl().ncclGroupEnd(), ncclSuccess);
  EXPECT_EQ(gpus.sync(1), CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT_EQ(cu().cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);  // sticky
  EXPECT_EQ(gpus.sync(0), CUDA_ERROR_LAUNCH_FAILED);  // its peer never came
  ncclResult_t async = ncclSuccess;
  EXPECT_EQ(nccl().ncclCommGetAsyncError(comms[1], &async), ncclSuccess);
  EXPECT_EQ(async, ncclUnhandledCudaError);
  EXPECT_EQ(nccl().ncclCommGetAsyncError(comms[0], &async), ncclSuccess);
  EXPECT_EQ(async, ncclRemoteError);
}

TEST_F(FakeNccl, RanksThatDisagreeFailAsInvalidUsage) {
  const std::vector<int> ordinals = {2, 3};
  const size_t count = 1024;
  Gpus gpus(cu(), ordinals, count * 4);
  auto comms = init_all(ordinals);
  ASSERT_EQ(comms.size(), 2u);
  testing::internal::CaptureStderr();
  for (size_t r = 0; r < 2; ++r)
    ASSERT_EQ(
        nccl().ncclAllReduce(ptr(gpus[r].send), ptr(gpus[r].recv), count - r,
                             ncclFloat32, ncclSum, comms[r], gpus[r].stream),
        ncclSuccess);
  for (size_t r = 0; r < 2; ++r) {
    EXPECT_EQ(gpus.sync(r), CUDA_ERROR_LAUNCH_FAILED);
    ncclResult_t async = ncclSuccess;
    EXPECT_EQ(nccl().ncclCommGetAsyncError(comms[r], &async), ncclSuccess);
    EXPECT_EQ(async, ncclInvalidUsage);
  }
  EXPECT_NE(testing::internal::GetCapturedStderr().find("disagree"),
            std::string::npos);
}

TEST_F(FakeNccl, TheBusBandwidthComesFromTheEnvironment) {
  set_env({{"FAKE_NCCL_BUS_GBPS", "100"}});
  const std::vector<int> ordinals = {2, 3};
  const size_t count = 1 << 20, bytes = count * 4;
  Gpus gpus(cu(), ordinals, bytes);
  auto comms = init_all(ordinals);
  ASSERT_EQ(comms.size(), 2u);
  for (size_t r = 0; r < 2; ++r) gpus.record_start(r);
  ASSERT_EQ(nccl().ncclGroupStart(), ncclSuccess);
  for (size_t r = 0; r < 2; ++r)
    ASSERT_EQ(
        nccl().ncclAllReduce(ptr(gpus[r].send), ptr(gpus[r].recv), count,
                             ncclFloat32, ncclSum, comms[r], gpus[r].stream),
        ncclSuccess);
  ASSERT_EQ(nccl().ncclGroupEnd(), ncclSuccess);
  for (size_t r = 0; r < 2; ++r) gpus.record_end(r);
  const double ms = modelled_ms(bytes, 2, 100e9);  // 42 us
  for (size_t r = 0; r < 2; ++r)
    EXPECT_NEAR(gpus.elapsed_ms(r), ms, 0.1 * ms) << "rank " << r;
}

}  // namespace
}  // namespace fake_nccl_test
