// The scenario and fault engine on their own (no NVML ABI involved).
#include <gtest/gtest.h>

#include <chrono>

#include "costs.h"
#include "error_codes.h"
#include "faults.h"
#include "pci_address.h"
#include "scenario.h"

namespace fake_nvml {
namespace {

Scenario three_samples(bool loop) {
  std::vector<std::vector<gd::GpuSample>> gpus(3);
  for (int k = 0; k < 3; ++k) {
    gd::GpuSample g;
    g.index = 0;
    g.util_pct = 10.0 * (k + 1);
    gpus[k].push_back(g);
  }
  return Scenario(gd::TraceHeader{}, {0.0, 1.0, 3.0}, std::move(gpus), loop);
}

TEST(ScenarioEngine, PicksTheLatestSampleAtOrBeforeTheTime) {
  Scenario s = three_samples(false);
  EXPECT_EQ(s.sample_at(0.0), 0u);
  EXPECT_EQ(s.sample_at(0.999), 0u);
  EXPECT_EQ(s.sample_at(1.0), 1u);
  EXPECT_EQ(s.sample_at(2.9), 1u);
  EXPECT_EQ(s.sample_at(3.0), 2u);
  EXPECT_EQ(s.sample_at(1e9), 2u);
}

TEST(ScenarioEngine, LoopWrapsAfterTheLastIntervalAgain) {
  Scenario s = three_samples(true);
  EXPECT_DOUBLE_EQ(s.period_s(), 5.0);  // 3 s of samples + last interval 2 s
  EXPECT_EQ(s.sample_at(4.9), 2u);
  EXPECT_EQ(s.sample_at(5.0), 0u);
  EXPECT_EQ(s.sample_at(6.5), 1u);
}

TEST(ScenarioEngine, GpuMissingFromASampleIsNull) {
  Scenario s = three_samples(false);
  ASSERT_NE(s.gpu(1, 0), nullptr);
  EXPECT_EQ(*s.gpu(1, 0)->util_pct, 20.0);
  EXPECT_EQ(s.gpu(1, 7), nullptr);
}

TEST(FaultEngine, ParsesTheWholeVocabulary) {
  Faults f = Faults::parse(R"([
    {"function": "nvmlDeviceGetPowerUsage", "gpu": 1, "return": "NOT_SUPPORTED"},
    {"function": "nvmlDeviceGetComputeRunningProcesses", "gpu": 0, "hang_s": 30},
    {"function": "nvmlDeviceGetName", "latency_ms": 5},
    {"gpu": 2, "lost_after_s": 5.0},
    {"init_return": "LIB_RM_VERSION_MISMATCH"},
    {"missing_symbols": ["nvmlDeviceGetMemoryInfo_v2"]}])");
  EXPECT_EQ(f.function_fault_count(), 3u);
  EXPECT_EQ(f.init_return(), kLibRmVersionMismatch);
  EXPECT_EQ(f.lost_after_s(2), 5.0);
  EXPECT_FALSE(f.lost_after_s(1));
  EXPECT_TRUE(f.symbol_missing("nvmlDeviceGetMemoryInfo_v2"));
  EXPECT_FALSE(f.symbol_missing("nvmlDeviceGetMemoryInfo"));

  EXPECT_EQ(f.decide("nvmlDeviceGetPowerUsage", 1, 0).return_code,
            kNotSupported);
  EXPECT_FALSE(f.decide("nvmlDeviceGetPowerUsage", 0, 0).return_code);
  EXPECT_DOUBLE_EQ(
      f.decide("nvmlDeviceGetComputeRunningProcesses_v3", 0, 0).sleep_s, 30.0);
  EXPECT_DOUBLE_EQ(f.decide("nvmlDeviceGetName", 3, 0).sleep_s, 0.005);
  EXPECT_EQ(f.decide("nvmlDeviceGetMemoryInfo_v2", 0, 0).return_code,
            kFunctionNotFound);
}

TEST(FaultEngine, RejectsMalformedFaults) {
  EXPECT_THROW(Faults::parse("{}"), std::runtime_error);
  EXPECT_THROW(Faults::parse(R"([{"function": "x"}])"), std::runtime_error);
  EXPECT_THROW(Faults::parse(R"([{"function": "x", "return": "BOGUS"}])"),
               std::runtime_error);
  EXPECT_THROW(Faults::parse(R"([{"lost_after_s": 1}])"), std::runtime_error);
  EXPECT_THROW(Faults::parse(R"([{"function": "x", "hang_s": -1}])"),
               std::runtime_error);
  EXPECT_NO_THROW(Faults::parse(""));
  EXPECT_NO_THROW(Faults::parse("null"));
}

TEST(FaultEngine, FunctionNamesMatchTheirVersionedSymbolsOnly) {
  EXPECT_TRUE(function_matches("nvmlDeviceGetPciInfo", "nvmlDeviceGetPciInfo"));
  EXPECT_TRUE(
      function_matches("nvmlDeviceGetPciInfo", "nvmlDeviceGetPciInfo_v3"));
  EXPECT_FALSE(
      function_matches("nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo"));
  EXPECT_FALSE(function_matches("nvmlInit", "nvmlInitWithFlags"));
  EXPECT_FALSE(function_matches("nvmlDeviceGetCount", "nvmlDeviceGetCount_vX"));
}

TEST(ErrorCodes, NamesAndNumbersBothResolve) {
  EXPECT_EQ(code_from_name("GPU_IS_LOST"), kGpuIsLost);
  EXPECT_EQ(code_from_name("NVML_ERROR_GPU_IS_LOST"), kGpuIsLost);
  EXPECT_EQ(code_from_name("NVML_SUCCESS"), kSuccess);
  EXPECT_EQ(code_from_name("15"), kGpuIsLost);
  EXPECT_FALSE(code_from_name("GPU_IS_FOUND"));
}

TEST(PciAddress, ParsesFullLegacyAndShortForms) {
  PciAddress want{0, 0x4E, 0, 0};
  EXPECT_EQ(parse_pci_address("00000000:4E:00.0"), want);
  EXPECT_EQ(parse_pci_address("0000:4e:00.0"), want);
  EXPECT_EQ(parse_pci_address("4E:00.0"), want);
  EXPECT_FALSE(parse_pci_address("not-a-bus-id"));
  EXPECT_EQ(bus_id(want), "00000000:4E:00.0");
  EXPECT_EQ(bus_id_legacy(want), "0000:4E:00.0");
}

TEST(CostModel, NamesFromBenchNvmlCallsAreNvmlNames) {
  EXPECT_EQ(CallCosts::key_for("GetPcieThroughput(TX)"),
            "nvmlDeviceGetPcieThroughput");
  EXPECT_EQ(CallCosts::key_for("GetMemoryInfo_v2"), "nvmlDeviceGetMemoryInfo");
  EXPECT_EQ(CallCosts::key_for("GpmMetricsGet (8 metrics)"),
            "nvmlGpmMetricsGet");
  EXPECT_EQ(CallCosts::key_for("dlopen + nvmlInit"), "nvmlInit");
  EXPECT_EQ(CallCosts::key_for("nvmlDeviceGetFanSpeed_v2"),
            "nvmlDeviceGetFanSpeed");
  EXPECT_EQ(CallCosts::key_for("(sum of the above)"), "");
  EXPECT_EQ(CallCosts::key_for("read_sample, every read"), "");
  EXPECT_EQ(CallCosts::key_for("call"), "");
}

TEST(CostModel, ReadsTheRealGpuFileAndItsLastSectionWins) {
  CallCosts c = CallCosts::load(REAL_GPU_COSTS_FILE);
  // The H200 section comes after the H100 one.
  EXPECT_DOUBLE_EQ(c.wall_us("nvmlDeviceGetPcieThroughput"), 20842.8);
  EXPECT_DOUBLE_EQ(c.wall_us("nvmlInit_v2"), 11543);
  EXPECT_DOUBLE_EQ(c.wall_us("nvmlDeviceGetTotalEnergyConsumption"), 3162.4);
  EXPECT_DOUBLE_EQ(c.wall_us("nvmlDeviceGetMemoryInfo_v2"), 8.1);
  EXPECT_DOUBLE_EQ(c.wall_us("nvmlGpmMetricsGet"), 1400.2);
  EXPECT_DOUBLE_EQ(c.wall_us("nvmlDeviceGetName"), 0);  // not listed
  EXPECT_EQ(c.size(), 29u);
}

TEST(CostModel, SpendsTheWallTime) {
  using Clock = std::chrono::steady_clock;
  for (double us : {300.0, 2500.0}) {
    auto t = Clock::now();
    spend_wall_us(us);
    const double spent =
        std::chrono::duration<double, std::micro>(Clock::now() - t).count();
    EXPECT_GE(spent, us);
  }
}

}  // namespace
}  // namespace fake_nvml
