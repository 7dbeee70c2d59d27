// Driver answers other than success: NOT_SUPPORTED, errors, lost GPUs and
// failed initialisation.
#include <gtest/gtest.h>

#include <cstdlib>
#include <thread>

#include "fake_scenario.h"

namespace {

using gd_test::fake_options;
using gd_test::FakeScenario;
using gd_test::json;
using namespace std::chrono_literals;

json fault(const std::string& function, int gpu, const std::string& ret) {
  return json{{"function", function}, {"gpu", gpu}, {"return", ret}};
}

std::vector<gd::Event> events_of_kind(const std::vector<gd::Event>& all,
                                      const std::string& kind) {
  std::vector<gd::Event> out;
  for (const auto& e : all) {
    if (e.kind == kind) out.push_back(e);
  }
  return out;
}

TEST(GpuSourceFaults, NotSupportedSampleFunctionsGiveUnknownFieldsAndNoEvents) {
  FakeScenario s = FakeScenario::with_gpus(2);
  json faults = json::array();
  for (const char* f : {"nvmlDeviceGetUtilizationRates",
                        "nvmlDeviceGetMemoryInfo",
                        "nvmlDeviceGetTemperature",
                        "nvmlDeviceGetFieldValues",
                        "nvmlDeviceGetPowerUsage",
                        "nvmlDeviceGetTotalEnergyConsumption",
                        "nvmlDeviceGetFanSpeed",
                        "nvmlDeviceGetClockInfo",
                        "nvmlDeviceGetPerformanceState",
                        "nvmlDeviceGetCurrentClocksEventReasons",
                        "nvmlDeviceGetCurrentClocksThrottleReasons",
                        "nvmlDeviceGetCurrPcieLinkGeneration",
                        "nvmlDeviceGetCurrPcieLinkWidth",
                        "nvmlDeviceGetPcieThroughput",
                        "nvmlDeviceGetPcieReplayCounter",
                        "nvmlDeviceGetTotalEccErrors",
                        "nvmlDeviceGetRetiredPagesPendingStatus",
                        "nvmlDeviceGetRemappedRows",
                        "nvmlDeviceGetComputeRunningProcesses",
                        "nvmlDeviceGetGraphicsRunningProcesses",
                        "nvmlDeviceGetMemoryErrorCounter",
                        "nvmlDeviceGetSramEccErrorStatus",
                        "nvmlDeviceGetRowRemapperHistogram",
                        "nvmlDeviceGetMarginTemperature",
                        "nvmlDeviceGetBAR1MemoryInfo"}) {
    faults.push_back(fault(f, 1, "NOT_SUPPORTED"));
  }
  s.header["faults"] = faults;
  s.install("not_supported_samples");
  gd::GpuSource c(fake_options());
  ASSERT_EQ(c.status(), gd::kNvmlOk) << c.error();
  std::vector<gd::Event> events;
  auto samples = c.sample(events);
  ASSERT_EQ(samples.size(), 2u);
  gd_test::expect_no_values(samples[1]);
  EXPECT_FALSE(samples[1].lost || samples[1].stale);
  gd_test::expect_sample_matches(samples[0], s.samples[0]["gpus"][0]);
  EXPECT_TRUE(events.empty());
  // N/A is not ERR!: nothing failed.
  EXPECT_TRUE(samples[1].read_errors.empty());
  // Static facts are not affected by faults on sample functions, except the
  // memory and BAR1 totals, which come from the same calls as their use.
  json info = s.header["gpus"][1];
  info["memory_total_bytes"] = nullptr;
  info["bar1_total_bytes"] = nullptr;
  gd_test::expect_info_matches(c.gpus()[1], info);
}

TEST(GpuSourceFaults, NotSupportedStaticFunctionsGiveUnknownFacts) {
  FakeScenario s = FakeScenario::with_gpus(2);
  json faults = json::array();
  for (const char* f : {"nvmlDeviceGetName",
                        "nvmlDeviceGetUUID",
                        "nvmlDeviceGetSerial",
                        "nvmlDeviceGetPciInfo",
                        "nvmlDeviceGetMemoryInfo",
                        "nvmlDeviceGetPowerManagementLimit",
                        "nvmlDeviceGetPowerManagementDefaultLimit",
                        "nvmlDeviceGetMaxPcieLinkGeneration",
                        "nvmlDeviceGetMaxPcieLinkWidth",
                        "nvmlDeviceGetTemperatureThreshold",
                        "nvmlDeviceGetMaxClockInfo",
                        "nvmlDeviceGetCudaComputeCapability",
                        "nvmlDeviceGetArchitecture",
                        "nvmlDeviceGetEccMode",
                        "nvmlDeviceGetMigMode",
                        "nvmlDeviceGetPersistenceMode",
                        "nvmlDeviceGetComputeMode",
                        "nvmlDeviceGetNumaNodeId",
                        "nvmlDeviceGetMinorNumber",
                        "nvmlDeviceGetVbiosVersion",
                        "nvmlDeviceGetBAR1MemoryInfo"}) {
    faults.push_back(fault(f, 0, "NOT_SUPPORTED"));
  }
  s.header["faults"] = faults;
  s.install("not_supported_static");
  gd::GpuSource c(fake_options());
  ASSERT_EQ(c.status(), gd::kNvmlOk) << c.error();
  json unknown = {{"index", 0},         {"uuid", ""},
                  {"name", ""},         {"pci_bus_id", ""},
                  {"serial", ""},       {"compute_capability", ""},
                  {"architecture", ""}, {"compute_mode", ""}};
  for (const char* k :
       {"memory_total_bytes", "power_limit_w", "power_default_limit_w",
        "pcie_max_gen", "pcie_max_width", "temp_slowdown_c", "temp_shutdown_c",
        "sm_clock_max_mhz", "mem_clock_max_mhz", "ecc_enabled", "mig_enabled",
        "persistence_mode", "numa_node", "minor_number", "temp_max_operating_c",
        "temp_mem_max_c", "bar1_total_bytes"}) {
    unknown[k] = nullptr;
  }
  unknown["vbios_version"] = "";
  gd_test::expect_info_matches(c.gpus()[0], unknown);
  gd_test::expect_info_matches(c.gpus()[1], s.header["gpus"][1]);
}

TEST(GpuSourceFaults, OtherErrorsGiveOneNvmlErrorEventPerFunctionPerInterval) {
  FakeScenario s = FakeScenario::with_gpus(2);
  s.header["faults"] =
      json::array({fault("nvmlDeviceGetPowerUsage", 0, "UNKNOWN"),
                   fault("nvmlDeviceGetTemperature", 0, "UNKNOWN")});
  s.install("errors");
  auto o = fake_options();
  o.error_interval = 1s;
  gd::GpuSource c(o);
  std::vector<gd::Event> events;
  for (int i = 0; i < 3; ++i) {
    auto samples = c.sample(events);
    EXPECT_FALSE(samples[0].power_w.has_value());
    EXPECT_FALSE(samples[0].temp_c.has_value());
    EXPECT_TRUE(samples[0].util_pct.has_value());
    EXPECT_TRUE(samples[1].power_w.has_value());
  }
  ASSERT_EQ(events.size(), 2u);  // one per failing function, not per sample
  for (const auto& e : events) {
    EXPECT_EQ(e.kind, "nvml_error");
    EXPECT_EQ(e.gpu, 0);
  }
  EXPECT_NE(events[0].text.find("nvmlDeviceGetTemperature"), std::string::npos)
      << events[0].text;
  EXPECT_NE(events[1].text.find("nvmlDeviceGetPowerUsage"), std::string::npos)
      << events[1].text;
  // After the interval the still-failing calls are reported again.
  std::this_thread::sleep_for(1100ms);
  events.clear();
  c.sample(events);
  EXPECT_EQ(events.size(), 2u);
}

TEST(GpuSourceFaults, GpuLostMidRunGivesLostSamplesAndOneEvent) {
  FakeScenario s = FakeScenario::with_gpus(2);
  s.header["faults"] = json::array({json{{"gpu", 1}, {"lost_after_s", 0.4}}});
  s.install("lost_mid_run");
  gd::GpuSource c(fake_options());
  std::vector<gd::Event> events;
  auto before = c.sample(events);
  EXPECT_FALSE(before[1].lost);
  EXPECT_TRUE(before[1].util_pct.has_value());
  EXPECT_TRUE(events.empty());

  std::this_thread::sleep_for(600ms);
  for (int i = 0; i < 3; ++i) {
    auto after = c.sample(events);
    EXPECT_TRUE(after[1].lost);
    EXPECT_EQ(after[1].index, 1);
    gd_test::expect_no_values(after[1]);
    EXPECT_FALSE(after[0].lost);
    EXPECT_TRUE(after[0].util_pct.has_value());
  }
  auto lost = events_of_kind(events, "gpu_lost");
  ASSERT_EQ(lost.size(), 1u);  // once per transition, not per sample
  EXPECT_EQ(lost[0].gpu, 1);
  EXPECT_TRUE(events_of_kind(events, "nvml_error").empty());
}

TEST(GpuSourceFaults, EachLossOfAGpuThatCameBackIsANewEvent) {
  FakeScenario s = FakeScenario::with_gpus(1);
  json ok = s.samples[0];
  json lost = json{{"t", 0},
                   {"gpus", json::array({json{{"index", 0}, {"lost", true}}})}};
  s.samples.clear();
  for (double t : {0.0, 0.3, 0.6, 0.9}) {
    json sample = (t == 0.3 || t == 0.9) ? lost : ok;
    sample["t"] = 1000.0 + t;
    s.samples.push_back(sample);
  }
  s.install("lost_twice");
  gd::GpuSource c(fake_options());
  const auto start = std::chrono::steady_clock::now();
  std::vector<bool> seen;
  std::vector<gd::Event> events;
  for (double at : {0.15, 0.45, 0.75, 1.05}) {
    std::this_thread::sleep_until(start + std::chrono::duration<double>(at));
    seen.push_back(c.sample(events).at(0).lost);
  }
  EXPECT_EQ(seen, (std::vector<bool>{false, true, false, true}));
  EXPECT_EQ(events_of_kind(events, "gpu_lost").size(), 2u);
}

struct InitCase {
  const char* init_return;
  const char* status;
};

class GpuSourceInitFailure : public ::testing::TestWithParam<InitCase> {};

TEST_P(GpuSourceInitFailure, NvmlInitErrorMapsToTheTraceStatus) {
  FakeScenario s = FakeScenario::with_gpus(1);
  s.header["faults"] =
      json::array({json{{"init_return", GetParam().init_return}}});
  s.install(std::string("init_") + GetParam().init_return);
  gd::GpuSource c(fake_options());
  EXPECT_EQ(c.status(), GetParam().status);
  EXPECT_NE(c.error().find("nvmlInit"), std::string::npos) << c.error();
  EXPECT_FALSE(c.driver().has_value());
  EXPECT_TRUE(c.gpus().empty());
  std::vector<gd::Event> events;
  EXPECT_TRUE(c.sample(events).empty());
}

INSTANTIATE_TEST_SUITE_P(
    Codes, GpuSourceInitFailure,
    ::testing::Values(InitCase{"DRIVER_NOT_LOADED", "no_driver"},
                      InitCase{"LIBRARY_NOT_FOUND", "no_driver"},
                      InitCase{"LIB_RM_VERSION_MISMATCH",
                               "driver_library_mismatch"},
                      InitCase{"NO_PERMISSION", "insufficient_permissions"},
                      InitCase{"UNKNOWN", "error"}),
    [](const auto& info) { return std::string(info.param.init_return); });

TEST(GpuSourceInitFailureText, ErrorStatusCarriesNvmlsOwnText) {
  FakeScenario s = FakeScenario::with_gpus(1);
  s.header["faults"] = json::array({json{{"init_return", "IRQ_ISSUE"}}});
  s.install("init_irq");
  gd::GpuSource c(fake_options());
  EXPECT_EQ(c.status(), gd::kNvmlError);
  // The fake's nvmlErrorString text, not just a number.
  EXPECT_EQ(c.error().find("NVML error 11"), std::string::npos) << c.error();
}

TEST(GpuSourceInitFailureText, DeviceCountFailureIsAnError) {
  FakeScenario s = FakeScenario::with_gpus(1);
  s.header["faults"] = json::array(
      {json{{"function", "nvmlDeviceGetCount"}, {"return", "UNKNOWN"}}});
  s.install("count_fails");
  gd::GpuSource c(fake_options());
  EXPECT_EQ(c.status(), gd::kNvmlError);
  EXPECT_NE(c.error().find("nvmlDeviceGetCount"), std::string::npos)
      << c.error();
  EXPECT_TRUE(c.gpus().empty());
}

TEST(GpuSourceInitFailureText, NoScenarioMeansNoDriver) {
  // The fake without FAKE_NVML_SCENARIO behaves like a driver that is not
  // loaded.
  unsetenv("FAKE_NVML_SCENARIO");
  gd::GpuSource c(fake_options());
  EXPECT_EQ(c.status(), gd::kNvmlNoDriver);
}

}  // namespace
