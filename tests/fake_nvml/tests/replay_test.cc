// Replay timing: at t0 + s the fake answers with the latest sample whose
// offset from the first is <= s (FAKE_NVML_SPEED scales s), optionally
// looping; null fields answer NOT_SUPPORTED, lost GPUs GPU_IS_LOST.
#include <chrono>
#include <thread>

#include "nvml_client.h"

namespace fake_nvml_test {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

class Replay : public ::testing::Test {
 protected:
  void TearDown() override {
    while (NVML_FN(nvml_, nvmlShutdown)() == NVML_SUCCESS) {
    }
  }
  // GPU 0's utilisation now, or -1 if the call fails.
  int util0() {
    nvmlDevice_t d = nullptr;
    if (NVML_FN(nvml_, nvmlDeviceGetHandleByIndex_v2)(0, &d) != NVML_SUCCESS)
      return -1;
    nvmlUtilization_t u{};
    if (NVML_FN(nvml_, nvmlDeviceGetUtilizationRates)(d, &u) != NVML_SUCCESS)
      return -1;
    return static_cast<int>(u.gpu);
  }
  void sleep_until(std::chrono::steady_clock::time_point t0,
                   std::chrono::milliseconds ms) {
    std::this_thread::sleep_until(t0 + ms);
  }

  NvmlClient nvml_{FAKE_NVML_LIB};
};

// Samples 1 s apart replayed at speed 4: one sample per 250 ms of wall time.
std::string three_samples(const char* name, bool loop_header) {
  auto header = basic_header(1);
  if (loop_header) header["loop"] = true;
  return write_scenario(name, header,
                        {util_sample(1000.0, 1, 10), util_sample(1001.0, 1, 20),
                         util_sample(1002.0, 1, 30)});
}

TEST_F(Replay, ValuesChangeFromOneSampleToTheNextAtItsOffset) {
  ScopedEnv scenario("FAKE_NVML_SCENARIO",
                     three_samples("replay.jsonl", false));
  ScopedEnv speed("FAKE_NVML_SPEED", "4");
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(NVML_FN(nvml_, nvmlInit_v2)(), NVML_SUCCESS);
  EXPECT_EQ(util0(), 10);
  sleep_until(t0, 375ms);  // scenario time ~1.5 s
  EXPECT_EQ(util0(), 20);
  sleep_until(t0, 625ms);  // ~2.5 s
  EXPECT_EQ(util0(), 30);
  sleep_until(t0, 1000ms);  // past the end: the last sample stays
  EXPECT_EQ(util0(), 30);
}

TEST_F(Replay, LoopEnvStartsOverAfterTheLastSample) {
  ScopedEnv scenario("FAKE_NVML_SCENARIO",
                     three_samples("loop_env.jsonl", false));
  ScopedEnv speed("FAKE_NVML_SPEED", "4");
  ScopedEnv loop("FAKE_NVML_LOOP", "1");
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(NVML_FN(nvml_, nvmlInit_v2)(), NVML_SUCCESS);
  // Period = 2 s of samples + 1 s (the last interval) = 3 s = 750 ms wall.
  sleep_until(t0, 875ms);  // ~3.5 s -> 0.5 s into the second round
  EXPECT_EQ(util0(), 10);
  sleep_until(t0, 1125ms);  // ~4.5 s -> 1.5 s
  EXPECT_EQ(util0(), 20);
}

TEST_F(Replay, LoopHeaderFieldLoopsToo) {
  ScopedEnv scenario("FAKE_NVML_SCENARIO",
                     three_samples("loop_header.jsonl", true));
  ScopedEnv speed("FAKE_NVML_SPEED", "4");
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(NVML_FN(nvml_, nvmlInit_v2)(), NVML_SUCCESS);
  sleep_until(t0, 875ms);
  EXPECT_EQ(util0(), 10);
}

TEST_F(Replay, TimeRestartsWhenInitAgainAfterTheLastShutdown) {
  ScopedEnv scenario("FAKE_NVML_SCENARIO",
                     three_samples("restart.jsonl", false));
  ScopedEnv speed("FAKE_NVML_SPEED", "4");
  ASSERT_EQ(NVML_FN(nvml_, nvmlInit_v2)(), NVML_SUCCESS);
  std::this_thread::sleep_for(400ms);
  EXPECT_EQ(util0(), 20);
  ASSERT_EQ(NVML_FN(nvml_, nvmlShutdown)(), NVML_SUCCESS);
  ASSERT_EQ(NVML_FN(nvml_, nvmlInit_v2)(), NVML_SUCCESS);
  EXPECT_EQ(util0(), 10);
}

TEST_F(Replay, NullFieldsAnswerNotSupported) {
  auto header = basic_header(1);
  header["gpus"][0]["memory_total_bytes"] = nullptr;
  header["gpus"][0]["serial"] = nullptr;
  json s = {{"t", 5.0},
            {"gpus",
             {{{"index", 0},
               {"util_pct", nullptr},
               {"power_w", nullptr},
               {"temp_c", 50},
               {"processes", nullptr},
               {"clock_event_reasons", nullptr}}}}};
  ScopedEnv scenario("FAKE_NVML_SCENARIO",
                     write_scenario("nulls.jsonl", header, {s}));
  ASSERT_EQ(NVML_FN(nvml_, nvmlInit_v2)(), NVML_SUCCESS);
  nvmlDevice_t d = nullptr;
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetHandleByIndex_v2)(0, &d), NVML_SUCCESS);
  unsigned v = 0;
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetPowerUsage)(d, &v),
            NVML_ERROR_NOT_SUPPORTED);
  nvmlUtilization_t u{};
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetUtilizationRates)(d, &u),
            NVML_ERROR_NOT_SUPPORTED);
  nvmlMemory_t m{};
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetMemoryInfo)(d, &m),
            NVML_ERROR_NOT_SUPPORTED);
  char buf[64];
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetSerial)(d, buf, sizeof buf),
            NVML_ERROR_NOT_SUPPORTED);
  unsigned count = 0;
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetComputeRunningProcesses_v3)(d, &count,
                                                                    nullptr),
            NVML_ERROR_NOT_SUPPORTED);
  unsigned long long reasons = 0;
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetCurrentClocksEventReasons)(d, &reasons),
            NVML_ERROR_NOT_SUPPORTED);
  // Absent fields (never written) are unknown too.
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetFanSpeed)(d, &v),
            NVML_ERROR_NOT_SUPPORTED);
  // The one field given still answers.
  ASSERT_EQ(
      NVML_FN(nvml_, nvmlDeviceGetTemperature)(d, NVML_TEMPERATURE_GPU, &v),
      NVML_SUCCESS);
  EXPECT_EQ(v, 50u);
}

TEST_F(Replay, LostGpuSampleMakesEveryDeviceCallGpuIsLost) {
  auto header = basic_header(2);
  json s0 = util_sample(0, 2, 50);
  json s1 = util_sample(1, 2, 60);
  s1["gpus"][1] = {{"index", 1}, {"lost", true}};
  ScopedEnv scenario("FAKE_NVML_SCENARIO",
                     write_scenario("lost.jsonl", header, {s0, s1}));
  ScopedEnv speed("FAKE_NVML_SPEED", "4");
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(NVML_FN(nvml_, nvmlInit_v2)(), NVML_SUCCESS);
  nvmlDevice_t d0 = nullptr, d1 = nullptr;
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetHandleByIndex_v2)(0, &d0),
            NVML_SUCCESS);
  ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetHandleByIndex_v2)(1, &d1),
            NVML_SUCCESS);
  unsigned v = 0;
  EXPECT_EQ(
      NVML_FN(nvml_, nvmlDeviceGetTemperature)(d1, NVML_TEMPERATURE_GPU, &v),
      NVML_SUCCESS);
  sleep_until(t0, 375ms);
  EXPECT_EQ(
      NVML_FN(nvml_, nvmlDeviceGetTemperature)(d1, NVML_TEMPERATURE_GPU, &v),
      NVML_ERROR_GPU_IS_LOST);
  char name[96];
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetName)(d1, name, sizeof name),
            NVML_ERROR_GPU_IS_LOST);
  unsigned count = 0;
  EXPECT_EQ(NVML_FN(nvml_, nvmlDeviceGetComputeRunningProcesses_v3)(d1, &count,
                                                                    nullptr),
            NVML_ERROR_GPU_IS_LOST);
  // The other GPU is fine.
  EXPECT_EQ(
      NVML_FN(nvml_, nvmlDeviceGetTemperature)(d0, NVML_TEMPERATURE_GPU, &v),
      NVML_SUCCESS);
}

}  // namespace
}  // namespace fake_nvml_test
