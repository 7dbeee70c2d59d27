// A read that FAILED (nvidia-smi's ERR!) is told from one the GPU does not
// support (N/A): read_errors names the field; the value stays unset.
// Also: the loaded library's version, and a GPU gone from enumeration.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <thread>

#include "fake_scenario.h"

namespace {

using gd_test::fake_options;
using gd_test::FakeScenario;
using gd_test::json;
using namespace std::chrono_literals;

json read_fault(const std::string& function, int gpu, const std::string& ret) {
  return json{{"function", function}, {"gpu", gpu}, {"return", ret}};
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

TEST(GpuSourceReadErrors, FailedReadIsRecordedNotSupportedIsNot) {
  FakeScenario s = FakeScenario::with_gpus(2);
  s.header["faults"] = json::array(
      {read_fault("nvmlDeviceGetPowerUsage", 1, "UNKNOWN"),
       read_fault("nvmlDeviceGetRemappedRows", 1, "TIMEOUT"),
       read_fault("nvmlDeviceGetFanSpeed", 1, "NOT_SUPPORTED"),
       read_fault("nvmlDeviceGetMarginTemperature", 1, "FUNCTION_NOT_FOUND")});
  s.install("read_errors");
  gd::GpuSource c(fake_options());
  ASSERT_EQ(c.status(), gd::kNvmlOk) << c.error();
  std::vector<gd::Event> events;
  auto samples = c.sample(events);
  ASSERT_EQ(samples.size(), 2u);
  const gd::GpuSample& g = samples[1];
  EXPECT_FALSE(g.lost);
  EXPECT_EQ(sorted(g.read_errors),
            sorted({"power_w", "remapped_rows_pending", "remapped_rows_failure",
                    "remapped_rows_correctable_total",
                    "remapped_rows_uncorrectable_total"}));
  EXPECT_FALSE(g.power_w.has_value());
  EXPECT_FALSE(g.remapped_rows_pending.has_value());
  EXPECT_FALSE(g.remapped_rows_correctable_total.has_value());
  // Unsupported: unset and not an error.
  EXPECT_FALSE(g.fan_pct.has_value());
  EXPECT_FALSE(g.temp_limit_margin_c.has_value());
  // The rest of the GPU reads on; the other GPU has no errors.
  EXPECT_TRUE(g.temp_c.has_value());
  EXPECT_TRUE(samples[0].read_errors.empty());
  EXPECT_TRUE(samples[0].power_w.has_value());
}

TEST(GpuSourceReadErrors, EverySampledFieldCanBeAFailedRead) {
  FakeScenario s = FakeScenario::with_gpus(1);
  json faults = json::array();
  for (const char* f : {"nvmlDeviceGetUtilizationRates",
                        "nvmlDeviceGetMemoryInfo",
                        "nvmlDeviceGetTemperature",
                        "nvmlDeviceGetFieldValues",
                        "nvmlDeviceGetMarginTemperature",
                        "nvmlDeviceGetPowerUsage",
                        "nvmlDeviceGetTotalEnergyConsumption",
                        "nvmlDeviceGetFanSpeed",
                        "nvmlDeviceGetClockInfo",
                        "nvmlDeviceGetPerformanceState",
                        "nvmlDeviceGetCurrentClocksEventReasons",
                        "nvmlDeviceGetCurrPcieLinkGeneration",
                        "nvmlDeviceGetCurrPcieLinkWidth",
                        "nvmlDeviceGetPcieThroughput",
                        "nvmlDeviceGetPcieReplayCounter",
                        "nvmlDeviceGetBAR1MemoryInfo",
                        "nvmlDeviceGetTotalEccErrors",
                        "nvmlDeviceGetMemoryErrorCounter",
                        "nvmlDeviceGetSramEccErrorStatus",
                        "nvmlDeviceGetRetiredPagesPendingStatus",
                        "nvmlDeviceGetRemappedRows",
                        "nvmlDeviceGetRowRemapperHistogram",
                        "nvmlDeviceGetComputeRunningProcesses",
                        "nvmlDeviceGetGraphicsRunningProcesses"}) {
    // From 0.5 scenario s on (after the static facts were read).
    json f_ = read_fault(f, 0, "UNKNOWN");
    f_["after_s"] = 0.5;
    faults.push_back(f_);
  }
  s.header["faults"] = faults;
  s.install("every_read_error");
  gd::GpuSource c(fake_options());
  ASSERT_EQ(c.status(), gd::kNvmlOk) << c.error();
  std::this_thread::sleep_for(600ms);
  std::vector<gd::Event> events;
  const gd::GpuSample g = c.sample(events).at(0);
  gd_test::expect_no_values(g);
  EXPECT_FALSE(g.lost || g.stale);
  EXPECT_EQ(sorted(g.read_errors),
            sorted({"util_pct",
                    "mem_util_pct",
                    "mem_used_bytes",
                    "mem_reserved_bytes",
                    "temp_c",
                    "mem_temp_c",
                    "recovery_action",
                    "temp_limit_margin_c",
                    "power_w",
                    "energy_mj_total",
                    "fan_pct",
                    "sm_clock_mhz",
                    "mem_clock_mhz",
                    "pstate",
                    "clock_event_reasons",
                    "pcie_gen",
                    "pcie_width",
                    "pcie_tx_bytes_per_s",
                    "pcie_rx_bytes_per_s",
                    "pcie_replay_total",
                    "bar1_used_bytes",
                    "ecc_sbe_volatile_total",
                    "ecc_dbe_volatile_total",
                    "ecc_sbe_aggregate_total",
                    "ecc_dbe_aggregate_total",
                    "ecc_sram_correctable_aggregate_total",
                    "ecc_sram_uncorrectable_aggregate_total",
                    "ecc_dram_correctable_aggregate_total",
                    "ecc_dram_uncorrectable_aggregate_total",
                    "ecc_sram_correctable_volatile_total",
                    "ecc_sram_uncorrectable_volatile_total",
                    "ecc_dram_correctable_volatile_total",
                    "ecc_dram_uncorrectable_volatile_total",
                    "ecc_sram_threshold_exceeded",
                    "retired_pages_pending",
                    "remapped_rows_pending",
                    "remapped_rows_failure",
                    "remapped_rows_correctable_total",
                    "remapped_rows_uncorrectable_total",
                    "row_remap_histogram",
                    "processes"}));
}

TEST(GpuSourceReadErrors, LostGpuIsNotAReadError) {
  FakeScenario s = FakeScenario::with_gpus(1);
  s.header["faults"] = json::array({json{{"gpu", 0}, {"lost_after_s", 0.3}}});
  s.install("lost_not_error");
  gd::GpuSource c(fake_options());
  std::this_thread::sleep_for(400ms);
  std::vector<gd::Event> events;
  const gd::GpuSample g = c.sample(events).at(0);
  EXPECT_TRUE(g.lost);
  EXPECT_TRUE(g.read_errors.empty());
}

TEST(GpuSourceReadErrors, GpuGoneFromEnumerationIsLost) {
  FakeScenario s = FakeScenario::with_gpus(3);
  s.header["faults"] = json::array({json{{"gpu", 2}, {"gone_after_s", 0.3}}});
  s.install("gone");
  gd::GpuSource c(fake_options());
  ASSERT_EQ(c.gpus().size(), 3u);
  std::vector<gd::Event> events;
  EXPECT_FALSE(c.sample(events).at(2).lost);
  std::this_thread::sleep_for(400ms);
  auto samples = c.sample(events);
  EXPECT_TRUE(samples.at(2).lost);
  EXPECT_FALSE(samples.at(1).lost);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, "gpu_lost");
  EXPECT_EQ(events[0].gpu, 2);
}

// A directory where libnvidia-ml.so.1 links to libnvidia-ml.so.<version>,
// a copy of the fake library: how a driver installs its NVML.
std::string versioned_library(const std::string& dir_name,
                              const std::string& version) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / dir_name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path real = dir / ("libnvidia-ml.so." + version);
  fs::copy_file(GD_FAKE_NVML_LIB, real, fs::copy_options::overwrite_existing);
  fs::create_symlink(real.filename(), dir / "libnvidia-ml.so.1");
  return (dir / "libnvidia-ml.so.1").string();
}

TEST(GpuSourceLibraryVersion, IsTheVersionOfTheFileLoaded) {
  FakeScenario s = FakeScenario::with_gpus(1);
  s.install("library_version");
  auto o = fake_options();
  o.lib_path = versioned_library("libver_ok", "535.104.05");
  gd::GpuSource c(o);
  ASSERT_EQ(c.status(), gd::kNvmlOk) << c.error();
  EXPECT_EQ(c.library_version(), "535.104.05");
  ASSERT_TRUE(c.driver().has_value());
  EXPECT_EQ(c.driver()->library_version, "535.104.05");
}

TEST(GpuSourceLibraryVersion, IsKnownWhenNvmlInitFails) {
  FakeScenario s = FakeScenario::with_gpus(1);
  s.header["faults"] =
      json::array({json{{"init_return", "LIB_RM_VERSION_MISMATCH"}}});
  s.install("library_version_mismatch");
  auto o = fake_options();
  o.lib_path = versioned_library("libver_mismatch", "550.54.15");
  gd::GpuSource c(o);
  EXPECT_EQ(c.status(), gd::kNvmlDriverMismatch);
  EXPECT_FALSE(c.driver().has_value());
  EXPECT_EQ(c.library_version(), "550.54.15");
}

}  // namespace
