// The opt-in cost model (FAKE_NVML_COSTS): listed calls take their wall
// time, unlisted ones and every call without the variable stay free.
#include <chrono>
#include <fstream>

#include "nvml_client.h"

namespace fake_nvml_test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

class Costs : public ::testing::Test {
 protected:
  void start(const char* cost_lines) {
    std::string scenario =
        write_scenario("costs.jsonl", basic_header(1), {util_sample(0, 1, 40)});
    scenario_.emplace("FAKE_NVML_SCENARIO", scenario);
    if (cost_lines) {
      auto path = std::filesystem::path(scenario).parent_path() / "costs.txt";
      std::ofstream(path) << cost_lines;
      costs_.emplace("FAKE_NVML_COSTS", path.string());
    } else {
      costs_.emplace("FAKE_NVML_COSTS", "");
    }
    auto t = Clock::now();
    ASSERT_EQ(NVML_FN(nvml_, nvmlInit_v2)(), NVML_SUCCESS);
    init_wall_ = Clock::now() - t;
    ASSERT_EQ(NVML_FN(nvml_, nvmlDeviceGetHandleByIndex_v2)(0, &dev_),
              NVML_SUCCESS);
  }
  void TearDown() override { NVML_FN(nvml_, nvmlShutdown)(); }

  // Wall time of one call of `fn`. The cost is paid whatever the answer
  // (this scenario has no PCIe or power figures: NOT_SUPPORTED).
  template <typename Fn>
  static Clock::duration timed(Fn fn) {
    auto t = Clock::now();
    fn();
    return Clock::now() - t;
  }
  Clock::duration pcie() {
    return timed([&] {
      unsigned kb = 0;
      NVML_FN(nvml_, nvmlDeviceGetPcieThroughput)
      (dev_, NVML_PCIE_UTIL_TX_BYTES, &kb);
    });
  }
  Clock::duration power() {
    return timed([&] {
      unsigned mw = 0;
      NVML_FN(nvml_, nvmlDeviceGetPowerUsage)(dev_, &mw);
    });
  }
  Clock::duration memory() {
    return timed([&] {
      nvmlMemory_v2_t m{};
      m.version = nvmlMemory_v2;
      NVML_FN(nvml_, nvmlDeviceGetMemoryInfo_v2)(dev_, &m);
    });
  }

  std::optional<ScopedEnv> scenario_, costs_;
  NvmlClient nvml_{FAKE_NVML_LIB};
  nvmlDevice_t dev_ = nullptr;
  Clock::duration init_wall_{};
};

TEST_F(Costs, NamedCallsTakeTheirWallTime) {
  // bench_nvml_calls' format: short name (argument), median wall, CPU, rc.
  start(
      "### a header line\n"
      "dlopen + nvmlInit                 60000 us wall   9000 us CPU (ok)\n"
      "call                        median wall      mean CPU     rc\n"
      "GetPcieThroughput(TX)            40000.0 us      700.0 us      0\n"
      "GetMemoryInfo_v2                   800.0 us      800.0 us      0\n"
      "(sum of the above)               40800.0 us     1500.0 us\n");
  EXPECT_GE(init_wall_, 60ms);
  EXPECT_GE(pcie(), 40ms);
  // The argument and the version suffix are not part of the name.
  EXPECT_GE(memory(), 800us);
  EXPECT_LT(power(), 20ms);  // unlisted: free
}

TEST_F(Costs, NvmlNamesAndMillisecondsWorkToo) {
  start("nvmlDeviceGetPowerUsage  45 ms\n");
  EXPECT_GE(power(), 45ms);
  EXPECT_LT(pcie(), 20ms);
}

TEST_F(Costs, OffByDefault) {
  start(nullptr);
  EXPECT_LT(init_wall_, 30ms);
  EXPECT_LT(pcie(), 20ms);
}

}  // namespace
}  // namespace fake_nvml_test
