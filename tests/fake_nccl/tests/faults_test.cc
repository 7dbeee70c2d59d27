// FAKE_NCCL_FAULTS (a slow link, wrong results, a failing init, each on the
// NVML GPU it names) and what a bad configuration does.
#include "nccl_fixture.h"

namespace fake_nccl_test {
namespace {

using FakeNcclFaults = FakeNcclTest;

// Runs one float sum of `count` elements over `gpus` (rank r sends r + 1
// everywhere), with events around it.
void all_reduce(const NcclFns& nccl, Gpus& gpus,
                const std::vector<ncclComm_t>& comms, size_t count) {
  for (size_t r = 0; r < gpus.size(); ++r) {
    gpus.fill_send(r, float_bits(static_cast<float>(r + 1)));
    gpus.record_start(r);
  }
  ASSERT_EQ(nccl.ncclGroupStart(), ncclSuccess);
  for (size_t r = 0; r < gpus.size(); ++r)
    ASSERT_EQ(
        nccl.ncclAllReduce(ptr(gpus[r].send), ptr(gpus[r].recv), count,
                           ncclFloat32, ncclSum, comms[r], gpus[r].stream),
        ncclSuccess);
  ASSERT_EQ(nccl.ncclGroupEnd(), ncclSuccess);
  for (size_t r = 0; r < gpus.size(); ++r) gpus.record_end(r);
}

TEST_F(FakeNcclFaults, ASlowLinkSlowsTheWholeClique) {
  set_env({{"FAKE_NCCL_FAULTS", R"([{"gpu": 2, "speed": 0.5}])"}});
  const size_t count = 1 << 20, bytes = count * 4;
  const double full_ms = bytes * 2.0 * 3 / 4 / 240e9 * 1e3;
  {
    const std::vector<int> ordinals = {0, 1, 2, 3};  // NVML 2 is CUDA 0
    Gpus gpus(cu(), ordinals, bytes);
    auto comms = init_all(ordinals);
    ASSERT_EQ(comms.size(), 4u);
    all_reduce(nccl(), gpus, comms, count);
    for (size_t r = 0; r < 4; ++r)
      EXPECT_NEAR(gpus.elapsed_ms(r), 2 * full_ms, 0.2 * full_ms)
          << "rank " << r;
  }
  {
    // A clique without it runs at full speed.
    const std::vector<int> ordinals = {ordinal_of(0), ordinal_of(1)};
    Gpus gpus(cu(), ordinals, bytes);
    auto comms = init_all(ordinals);
    ASSERT_EQ(comms.size(), 2u);
    all_reduce(nccl(), gpus, comms, count);
    const double ms = bytes * 2.0 * 1 / 2 / 240e9 * 1e3;
    for (size_t r = 0; r < 2; ++r)
      EXPECT_NEAR(gpus.elapsed_ms(r), ms, 0.1 * ms) << "rank " << r;
  }
}

TEST_F(FakeNcclFaults, WrongResultsComeOutOfOneGpu) {
  set_env({{"FAKE_NCCL_FAULTS", R"([{"gpu": 1, "wrong_results": 3}])"}});
  const std::vector<int> ordinals = {ordinal_of(0), ordinal_of(1)};
  const size_t count = 4096;
  Gpus gpus(cu(), ordinals, count * 4);
  auto comms = init_all(ordinals);
  ASSERT_EQ(comms.size(), 2u);
  all_reduce(nccl(), gpus, comms, count);
  const auto good = gpus.recv<float>(0, count);
  const auto bad = gpus.recv<float>(1, count);  // NVML GPU 1
  for (size_t i = 0; i < count; ++i) {
    EXPECT_EQ(good[i], 3.0f) << i;
    EXPECT_EQ(bad[i], i < 3 ? 4.0f : 3.0f) << i;
  }
  ncclResult_t async = ncclInternalError;
  EXPECT_EQ(nccl().ncclCommGetAsyncError(comms[1], &async), ncclSuccess);
  EXPECT_EQ(async, ncclSuccess);  // nothing tells: only the data is wrong
}

TEST_F(FakeNcclFaults, AnInitErrorFailsEveryCliqueWithTheGpu) {
  set_env({{"FAKE_NCCL_FAULTS",
            R"([{"gpu": 0, "init_error": "ncclSystemError"}])"}});
  ncclComm_t comms[4] = {};
  EXPECT_EQ(nccl().ncclCommInitAll(comms, 4, nullptr), ncclSystemError);
  const int with[] = {ordinal_of(0)};
  EXPECT_EQ(nccl().ncclCommInitAll(comms, 1, with), ncclSystemError);
  for (ncclComm_t c : comms) EXPECT_EQ(c, nullptr);
  EXPECT_EQ(init_all({ordinal_of(1), ordinal_of(2), ordinal_of(3)}).size(), 3u);
}

TEST_F(FakeNcclFaults, ABadConfigurationIsAnInvalidArgumentSaidOnStderr) {
  const std::vector<std::pair<std::map<std::string, std::string>, std::string>>
      cases = {
          {{{"FAKE_NCCL_FAULTS", R"([{"gpu": 0, "sped": 0.5}])"}},
           "unknown key \"sped\""},
          {{{"FAKE_NCCL_FAULTS", R"([{"gpu": 0, "speed": 0}])"}}, "speed"},
          {{{"FAKE_NCCL_FAULTS", R"([{"gpu": 0, "speed": "slow"}])"}}, "speed"},
          {{{"FAKE_NCCL_FAULTS", R"([{"gpu": 0, "wrong_results": -1}])"}},
           "wrong_results"},
          {{{"FAKE_NCCL_FAULTS", R"([{"gpu": 0, "wrong_results": 1.5}])"}},
           "wrong_results"},
          {{{"FAKE_NCCL_FAULTS",
             R"([{"gpu": 0, "init_error": "ncclSuccess"}])"}},
           "init_error"},
          {{{"FAKE_NCCL_FAULTS", R"([{"gpu": 0, "init_error": "oops"}])"}},
           "init_error"},
          {{{"FAKE_NCCL_FAULTS", R"([{"speed": 0.5}])"}}, "needs \"gpu\""},
          {{{"FAKE_NCCL_FAULTS", R"([{"gpu": -1}])"}}, "needs \"gpu\""},
          {{{"FAKE_NCCL_FAULTS", R"([3])"}}, "not an object"},
          {{{"FAKE_NCCL_FAULTS", R"({"gpu": 0})"}}, "must be a JSON list"},
          {{{"FAKE_NCCL_FAULTS", "[{"}}, "is not JSON"},
          {{{"FAKE_NCCL_BUS_GBPS", "fast"}}, "FAKE_NCCL_BUS_GBPS=fast"},
          {{{"FAKE_NCCL_BUS_GBPS", "0"}}, "FAKE_NCCL_BUS_GBPS=0"},
          {{{"FAKE_NCCL_BUS_GBPS", "-5"}}, "FAKE_NCCL_BUS_GBPS=-5"},
          {{{"FAKE_NCCL_TIMEOUT_S", "0"}}, "FAKE_NCCL_TIMEOUT_S=0"},
          {{{"FAKE_NCCL_TIMEOUT_S", "inf"}}, "FAKE_NCCL_TIMEOUT_S=inf"},
      };
  for (const auto& [env, said] : cases) {
    set_env(env);
    ncclComm_t comms[2] = {};
    testing::internal::CaptureStderr();
    EXPECT_EQ(nccl().ncclCommInitAll(comms, 2, nullptr), ncclInvalidArgument)
        << env.begin()->second;
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("fake libnccl: "), std::string::npos) << err;
    EXPECT_NE(err.find(said), std::string::npos) << err;
    EXPECT_EQ(comms[0], nullptr);
  }
  set_env({{"FAKE_NCCL_FAULTS",
            R"([{"gpu": 7, "speed": 2, "wrong_results": 0}])"}});
  EXPECT_EQ(init_all({0, 1}).size(), 2u);  // a GPU the node lacks: no matter
}

}  // namespace
}  // namespace fake_nccl_test
