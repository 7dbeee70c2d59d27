// Every GpuInfo / GpuSample field through the fake NVML: the value path, and
// the fallback chains (old-API library, hidden symbols, FUNCTION_NOT_FOUND).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "fake_scenario.h"

namespace {

using gd_test::fake_options;
using gd_test::FakeScenario;
using gd_test::json;

void expect_driver(const gd::GpuSource& c) {
  ASSERT_TRUE(c.driver().has_value());
  EXPECT_EQ(c.driver()->driver_version, "535.129.03");
  EXPECT_EQ(c.driver()->cuda_driver_version, "12.2");
  EXPECT_EQ(c.driver()->nvml_version, "12.535.129.03");
}

// Static facts and one sample of every GPU equal the scenario's.
void expect_everything_matches(gd::GpuSource& c, const FakeScenario& s) {
  ASSERT_EQ(c.status(), gd::kNvmlOk) << c.error();
  expect_driver(c);
  const json& infos = s.header["gpus"];
  ASSERT_EQ(c.gpus().size(), infos.size());
  for (size_t i = 0; i < infos.size(); ++i)
    gd_test::expect_info_matches(c.gpus()[i], infos[i]);
  std::vector<gd::Event> events;
  auto samples = c.sample(events);
  const json& want = s.samples[0]["gpus"];
  ASSERT_EQ(samples.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    gd_test::expect_sample_matches(samples[i], want[i]);
  EXPECT_TRUE(events.empty()) << events[0].text;
}

TEST(GpuSourceFields, EveryStaticFactAndSampleFieldComesThrough) {
  FakeScenario s = FakeScenario::with_gpus(2);
  s.install("every_field");
  gd::GpuSource c(fake_options());
  expect_everything_matches(c, s);
}

TEST(GpuSourceFields, UnitsAreConvertedFromNvmls) {
  // Spot checks of the conversions, from NVML's units to the trace's:
  // mW -> W (power and limits), KB/s -> bytes/s, "M.m" compute capability,
  // PCI bus id as NVML prints it.
  FakeScenario s = FakeScenario::with_gpus(1);
  s.install("units");
  gd::GpuSource c(fake_options());
  ASSERT_EQ(c.status(), gd::kNvmlOk) << c.error();
  EXPECT_DOUBLE_EQ(*c.gpus()[0].power_limit_w, 350.5);
  EXPECT_EQ(c.gpus()[0].pci_bus_id, "00000000:07:00.0");
  std::vector<gd::Event> events;
  auto g = c.sample(events).at(0);
  EXPECT_DOUBLE_EQ(*g.power_w, 312.5);
  EXPECT_EQ(*g.pcie_tx_bytes_per_s, 1200000ULL * 1024);
}

TEST(GpuSourceFields, OldLibraryWithoutNewerSymbolsFallsBackForEveryField) {
  // fake_nvml_old exports no _v3 process lists, no MemoryInfo_v2, no
  // ClocksEventReasons, no CudaDriverVersion_v2, no FieldValues, no
  // NumaNodeId: every field but mem_temp_c (no older way to read it) and
  // numa_node (sysfs here has no such device) must still arrive.
  FakeScenario s = FakeScenario::with_gpus(2);
  for (auto& g : s.header["gpus"]) g.erase("numa_node");
  // Nor the fields of newer drivers: reserved FB (MemoryInfo_v2), the
  // recovery action (a field value), the T.Limit margin, SRAM ECC status.
  for (auto& g : s.samples[0]["gpus"]) {
    for (const char* newer :
         {"mem_temp_c", "mem_reserved_bytes", "recovery_action",
          "temp_limit_margin_c", "ecc_sram_threshold_exceeded"}) {
      g.erase(newer);
    }
  }
  s.install("old_api");
  gd::GpuSource c(fake_options(/*old_api=*/true));
  expect_everything_matches(c, s);
}

// Each newest variant removed one way or another: the next one answers.
const std::vector<std::string> kNewestVariants = {
    "nvmlDeviceGetComputeRunningProcesses_v3",
    "nvmlDeviceGetComputeRunningProcesses_v2",
    "nvmlDeviceGetGraphicsRunningProcesses_v3",
    "nvmlDeviceGetGraphicsRunningProcesses_v2",
    "nvmlDeviceGetCurrentClocksEventReasons",
    "nvmlDeviceGetMemoryInfo_v2",
    "nvmlDeviceGetPciInfo_v3",
    "nvmlDeviceGetPciInfo_v2",
    "nvmlSystemGetCudaDriverVersion_v2",
    "nvmlInit_v2"};

// Only nvmlDeviceGetMemoryInfo_v2 tells reserved memory: without it the
// field is unknown (the scenario file keeps it; the expectation does not).
void drop_reserved_memory(FakeScenario& s) {
  for (auto& g : s.samples[0]["gpus"]) g.erase("mem_reserved_bytes");
}

TEST(GpuSourceFields, MissingSymbolsFallBackToOlderVariants) {
  FakeScenario s = FakeScenario::with_gpus(2);
  s.install("hidden_symbols");
  drop_reserved_memory(s);
  auto o = fake_options();
  o.hidden_symbols = {kNewestVariants.begin(), kNewestVariants.end()};
  gd::GpuSource c(o);
  expect_everything_matches(c, s);
}

TEST(GpuSourceFields, FunctionNotFoundAnswersFallBackToOlderVariants) {
  // The symbol exists but the driver says FUNCTION_NOT_FOUND (too old).
  FakeScenario s = FakeScenario::with_gpus(2);
  s.header["faults"] =
      json::array({json{{"missing_symbols", kNewestVariants}}});
  s.install("function_not_found");
  drop_reserved_memory(s);
  gd::GpuSource c(fake_options());
  expect_everything_matches(c, s);
  // The chain remembers: later samples still have the values.
  std::vector<gd::Event> events;
  gd_test::expect_sample_matches(c.sample(events).at(1),
                                 s.samples[0]["gpus"][1]);
}

TEST(GpuSourceFields, NoVariantAtAllGivesUnknownWithoutEvents) {
  FakeScenario s = FakeScenario::with_gpus(1);
  s.install("no_variant");
  auto o = fake_options();
  o.hidden_symbols = {"nvmlDeviceGetCurrentClocksEventReasons",
                      "nvmlDeviceGetCurrentClocksThrottleReasons",
                      "nvmlDeviceGetComputeRunningProcesses_v3",
                      "nvmlDeviceGetComputeRunningProcesses_v2",
                      "nvmlDeviceGetComputeRunningProcesses",
                      "nvmlDeviceGetGraphicsRunningProcesses_v3",
                      "nvmlDeviceGetGraphicsRunningProcesses_v2",
                      "nvmlDeviceGetGraphicsRunningProcesses",
                      "nvmlDeviceGetPowerUsage"};
  gd::GpuSource c(o);
  std::vector<gd::Event> events;
  auto g = c.sample(events).at(0);
  EXPECT_FALSE(g.clock_event_reasons.has_value());
  EXPECT_FALSE(g.processes.has_value());
  EXPECT_FALSE(g.power_w.has_value());
  EXPECT_TRUE(g.temp_c.has_value());  // the rest is unaffected
  EXPECT_TRUE(events.empty());
}

TEST(GpuSourceFields, ManyProcessesAreAllListedDespiteTheSmallFirstBuffer) {
  FakeScenario s = FakeScenario::with_gpus(1);
  json procs = json::array();
  for (int i = 0; i < 37; ++i) {
    procs.push_back(json{{"pid", 10000 + i},
                         {"used_bytes", 1048576 * (i + 1)},
                         {"type", i % 3 == 0 ? "graphics" : "compute"}});
  }
  s.samples[0]["gpus"][0]["processes"] = procs;
  s.install("many_processes");
  gd::GpuSource c(fake_options());
  std::vector<gd::Event> events;
  gd_test::expect_sample_matches(c.sample(events).at(0),
                                 s.samples[0]["gpus"][0]);
}

TEST(GpuSourceFields, NoProcessesIsAnEmptyListNotUnknown) {
  FakeScenario s = FakeScenario::with_gpus(1);
  s.samples[0]["gpus"][0]["processes"] = json::array();
  s.install("no_processes");
  gd::GpuSource c(fake_options());
  std::vector<gd::Event> events;
  auto g = c.sample(events).at(0);
  ASSERT_TRUE(g.processes.has_value());
  EXPECT_TRUE(g.processes->empty());
}

TEST(GpuSourceFields, FieldsTheDriverDoesNotKnowStayUnknownNotZero) {
  FakeScenario s = FakeScenario::with_gpus(2);
  s.samples[0]["gpus"][1] = json{{"index", 1}};  // the fake knows nothing
  s.install("unknown_fields");
  gd::GpuSource c(fake_options());
  std::vector<gd::Event> events;
  auto samples = c.sample(events);
  gd_test::expect_no_values(samples.at(1));
  gd_test::expect_sample_matches(samples.at(0), s.samples[0]["gpus"][0]);
}

TEST(GpuSourceFields, NumaNodeComesFromSysfsWhenNvmlHasNone) {
  FakeScenario s = FakeScenario::with_gpus(2);
  s.install("sysfs_numa");
  namespace fs = std::filesystem;
  const fs::path root = fs::path(::testing::TempDir()) / "sysfs_numa";
  fs::remove_all(root);
  // sysfs names the device with a 4-digit, lower-case domain.
  fs::create_directories(root / "bus/pci/devices/0000:07:00.0");
  fs::create_directories(root / "bus/pci/devices/0000:0f:00.0");
  std::ofstream(root / "bus/pci/devices/0000:07:00.0/numa_node") << "1\n";
  std::ofstream(root / "bus/pci/devices/0000:0f:00.0/numa_node")
      << "-1\n";                            // no affinity
  auto o = fake_options(/*old_api=*/true);  // no nvmlDeviceGetNumaNodeId
  o.sysfs_root = root.string();
  gd::GpuSource c(o);
  ASSERT_EQ(c.gpus().size(), 2u);
  EXPECT_EQ(c.gpus()[0].numa_node, 1);
  EXPECT_FALSE(c.gpus()[1].numa_node.has_value());
}

}  // namespace

namespace {

// The costly reads (PCIe throughput, energy, T.Limit margin, replays, BAR1)
// repeat their last values until slow_read_interval has passed, while the
// cheap ones follow every sample; with an interval of 0 all follow.
TEST(GpuSourceSlowReads, CostlyFieldsRepeatUntilTheirIntervalCheapOnesFollow) {
  FakeScenario s = FakeScenario::with_gpus(1);
  json later = s.samples[0];
  later["t"] = s.samples[0]["t"].get<double>() + 1.0;
  json& g = later["gpus"][0];
  g["temp_c"] = g["temp_c"].get<int>() + 1;
  g["energy_mj_total"] = g["energy_mj_total"].get<uint64_t>() + 100000;
  g["pcie_tx_bytes_per_s"] = g["pcie_tx_bytes_per_s"].get<uint64_t>() + 4096;
  g["bar1_used_bytes"] = g["bar1_used_bytes"].get<uint64_t>() + (1 << 20);
  s.samples.push_back(later);
  s.install("slow_reads");
  for (auto interval :
       {std::chrono::milliseconds(3600 * 1000), std::chrono::milliseconds(0)}) {
    SCOPED_TRACE(interval.count());
    gd::GpuSource::Options o = fake_options();
    o.slow_read_interval = interval;
    gd::GpuSource c(o);
    ASSERT_EQ(c.status(), gd::kNvmlOk) << c.error();
    std::vector<gd::Event> events;
    const gd::GpuSample a = c.sample(events).at(0);
    ASSERT_EQ(a.temp_c, s.samples[0]["gpus"][0]["temp_c"].get<int>())
        << "the first read came after the scenario's second sample";
    std::this_thread::sleep_for(std::chrono::milliseconds(1300));
    const gd::GpuSample b = c.sample(events).at(0);
    EXPECT_EQ(b.temp_c, *a.temp_c + 1);
    const bool repeat = interval.count() > 0;
    EXPECT_EQ(*b.energy_mj_total, *a.energy_mj_total + (repeat ? 0 : 100000));
    EXPECT_EQ(*b.pcie_tx_bytes_per_s,
              *a.pcie_tx_bytes_per_s + (repeat ? 0 : 4096));
    EXPECT_EQ(*b.bar1_used_bytes,
              *a.bar1_used_bytes + (repeat ? 0 : (1 << 20)));
  }
}

}  // namespace
