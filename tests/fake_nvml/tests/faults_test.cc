// Faults from the scenario header: forced return codes, latency, hangs,
// GPUs lost after a time, missing symbols.
#include <atomic>
#include <chrono>
#include <thread>

#include "nvml_client.h"

namespace fake_nvml_test {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

class Faults : public ::testing::Test {
 protected:
  // Loads a 2-GPU scenario with `faults` and inits NVML.
  void start(const std::string& name, const json& faults,
             const char* speed = "1") {
    auto header = basic_header(2);
    header["faults"] = faults;
    std::string path = write_scenario(name, header, {util_sample(0, 2, 40)});
    scenario_.emplace("FAKE_NVML_SCENARIO", path);
    speed_.emplace("FAKE_NVML_SPEED", speed);
    ASSERT_EQ(NVML_FN(nvml_, nvmlInit_v2)(), NVML_SUCCESS);
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetHandleByIndex_v2)(0, &d0_),
              NVML_SUCCESS);
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetHandleByIndex_v2)(1, &d1_),
              NVML_SUCCESS);
  }
  void TearDown() override { NVML_FN(nvml_, nvmlShutdown)(); }
  nvmlReturn_t power(nvmlDevice_t d) {
    unsigned mw = 0;
    return NVML_FN(nvml_, nvmlDeviceGetPowerUsage)(d, &mw);
  }
  nvmlReturn_t temp(nvmlDevice_t d) {
    unsigned c = 0;
    return NVML_FN(nvml_, nvmlDeviceGetTemperature)(d, NVML_TEMPERATURE_GPU,
                                                    &c);
  }

  std::optional<ScopedEnv> scenario_, speed_;
  NvmlClient nvml_{FAKE_NVML_LIB};
  nvmlDevice_t d0_ = nullptr, d1_ = nullptr;
};

TEST_F(Faults, ReturnFaultHitsOnlyTheNamedFunctionOnTheNamedGpu) {
  start("ret.jsonl", {{{"function", "nvmlDeviceGetTemperature"},
                       {"gpu", 1},
                       {"return", "UNKNOWN"}}});
  EXPECT_EQ(temp(d1_), NVML_ERROR_UNKNOWN);
  EXPECT_EQ(temp(d0_), NVML_SUCCESS);
}

TEST_F(Faults, ReturnFaultWithoutGpuHitsEveryGpu) {
  start("ret_all.jsonl", {{{"function", "nvmlDeviceGetTemperature"},
                           {"return", "NVML_ERROR_TIMEOUT"}}});
  EXPECT_EQ(temp(d0_), NVML_ERROR_TIMEOUT);
  EXPECT_EQ(temp(d1_), NVML_ERROR_TIMEOUT);
}

TEST_F(Faults, FaultOnABaseNameCoversItsVersionedSymbols) {
  start("versions.jsonl",
        {{{"function", "nvmlDeviceGetComputeRunningProcesses"},
          {"gpu", 0},
          {"return", "GPU_IS_LOST"}}});
  unsigned count = 0;
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetComputeRunningProcesses_v3)(d0_, &count,
                                                                    nullptr),
            NVML_ERROR_GPU_IS_LOST);
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetComputeRunningProcesses)(d0_, &count,
                                                                 nullptr),
            NVML_ERROR_GPU_IS_LOST);
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetGraphicsRunningProcesses_v3)(
                d0_, &count, nullptr),
            NVML_SUCCESS);
}

TEST_F(Faults, LatencyFaultDelaysTheCall) {
  start("latency.jsonl", {{{"function", "nvmlDeviceGetTemperature"},
                           {"gpu", 0},
                           {"latency_ms", 150}}});
  auto t = Clock::now();
  EXPECT_EQ(temp(d0_), NVML_SUCCESS);  // still answers
  EXPECT_GE(Clock::now() - t, 150ms);
  t = Clock::now();
  EXPECT_EQ(temp(d1_), NVML_SUCCESS);
  EXPECT_LT(Clock::now() - t, 100ms);
}

TEST_F(Faults, HangBlocksForItsDurationAndOtherThreadsCarryOn) {
  start("hang.jsonl", {{{"function", "nvmlDeviceGetComputeRunningProcesses"},
                        {"gpu", 0},
                        {"hang_s", 0.6}}});
  std::atomic<bool> done{false};
  auto t = Clock::now();
  std::thread hung([&] {
    unsigned count = 0;
    NVML_FN(nvml_, nvmlDeviceGetComputeRunningProcesses_v3)
    (d0_, &count, nullptr);
    done = true;
  });
  std::this_thread::sleep_for(100ms);
  EXPECT_FALSE(done);
  // Meanwhile other calls, even on the same GPU, answer at once.
  auto t_other = Clock::now();
  EXPECT_EQ(temp(d0_), NVML_SUCCESS);
  EXPECT_LT(Clock::now() - t_other, 100ms);
  hung.join();
  auto took = Clock::now() - t;
  EXPECT_GE(took, 600ms);
  EXPECT_LT(took, 3s);  // bounded: the hang ends by itself
}

TEST_F(Faults, LostAfterMakesTheGpuLostFromThatScenarioTime) {
  // 0.5 scenario s at speed 2 = 250 ms.
  start("lost_after.jsonl", {{{"gpu", 1}, {"lost_after_s", 0.5}}}, "2");
  auto t0 = Clock::now();
  EXPECT_EQ(temp(d1_), NVML_SUCCESS);
  std::this_thread::sleep_until(t0 + 400ms);
  EXPECT_EQ(temp(d1_), NVML_ERROR_GPU_IS_LOST);
  EXPECT_EQ(power(d1_), NVML_ERROR_GPU_IS_LOST);
  EXPECT_EQ(temp(d0_), NVML_SUCCESS);
  nvmlDevice_t again = nullptr;
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetHandleByIndex_v2)(1, &again),
            NVML_ERROR_GPU_IS_LOST);
}

TEST_F(Faults, TimeWindowLimitsAFault) {
  start("window.jsonl",
        {{{"function", "nvmlDeviceGetTemperature"},
          {"return", "UNKNOWN"},
          {"after_s", 0.5},
          {"until_s", 1.0}}},
        "2");
  auto t0 = Clock::now();
  EXPECT_EQ(temp(d0_), NVML_SUCCESS);
  std::this_thread::sleep_until(t0 + 375ms);  // 0.75 s
  EXPECT_EQ(temp(d0_), NVML_ERROR_UNKNOWN);
  std::this_thread::sleep_until(t0 + 625ms);  // 1.25 s
  EXPECT_EQ(temp(d0_), NVML_SUCCESS);
}

TEST_F(Faults, MissingSymbolAnswersFunctionNotFound) {
  start("missing.jsonl", {{{"missing_symbols",
                            {"nvmlDeviceGetComputeRunningProcesses_v3",
                             "nvmlDeviceGetVbiosVersion"}}}});
  unsigned count = 0;
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetComputeRunningProcesses_v3)(d0_, &count,
                                                                    nullptr),
            NVML_ERROR_FUNCTION_NOT_FOUND);
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetComputeRunningProcesses_v2)(d0_, &count,
                                                                    nullptr),
            NVML_SUCCESS);
  char buf[32];
  auto vbios = nvml_.fn<nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned)>(
      "nvmlDeviceGetVbiosVersion");
  EXPECT_EQ(vbios(d0_, buf, sizeof buf), NVML_ERROR_FUNCTION_NOT_FOUND);
}

TEST(FaultsInit, HangOnInitDelaysInit) {
  NvmlClient nvml(FAKE_NVML_LIB);
  auto header = basic_header(1);
  header["faults"] = {{{"function", "nvmlInit"}, {"hang_s", 0.3}}};
  ScopedEnv scenario(
      "FAKE_NVML_SCENARIO",
      write_scenario("init_hang.jsonl", header, {util_sample(0, 1, 1)}));
  auto t = Clock::now();
  EXPECT_EQ(NVML_FN(nvml, nvmlInit_v2)(), NVML_SUCCESS);
  EXPECT_GE(Clock::now() - t, 300ms);
  NVML_FN(nvml, nvmlShutdown)();
}

TEST(FaultsInit, UnknownFaultIsRejectedAtInit) {
  NvmlClient nvml(FAKE_NVML_LIB);
  auto header = basic_header(1);
  header["faults"] = {
      {{"function", "nvmlDeviceGetName"}, {"return", "NO_SUCH_CODE"}}};
  ScopedEnv scenario(
      "FAKE_NVML_SCENARIO",
      write_scenario("bad_fault.jsonl", header, {util_sample(0, 1, 1)}));
  EXPECT_EQ(NVML_FN(nvml, nvmlInit_v2)(), NVML_ERROR_UNKNOWN);
}

}  // namespace
}  // namespace fake_nvml_test
