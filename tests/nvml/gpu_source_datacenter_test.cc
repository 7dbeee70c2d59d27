// MIG, NVLink, GPM and per-process utilisation through GpuSource and the
// fake NVML: the values of the scenario arrive in the model, GPUs without
// them stay unknown (never 0), and the fallbacks work.
#include <gtest/gtest.h>

#include <thread>

#include "fake_scenario.h"
#include "nvml/device_reader.h"

namespace {

using gd_test::fake_options;
using gd_test::FakeScenario;
using gd_test::json;
using namespace std::chrono_literals;

constexpr unsigned long long kGiB = 1ULL << 30;

json mig(unsigned gi, const char* profile, unsigned long long total,
         unsigned long long used) {
  return {
      {"gi_id", gi},
      {"ci_id", 0},
      {"profile", profile},
      {"uuid", "MIG-5c1e2d3f-0000-5111-8222-00000000000" + std::to_string(gi)},
      {"mem_total_bytes", total},
      {"mem_used_bytes", used}};
}

json gpm(double sm) {
  return {{"sm_active_pct", sm},       {"sm_occupancy_pct", 25.0},
          {"tensor_active_pct", 30.0}, {"dram_active_pct", 60.0},
          {"fp64_active_pct", 0.0},    {"fp32_active_pct", 12.0},
          {"fp16_active_pct", 20.0},   {"gr_engine_active_pct", 95.0}};
}

// GPU 0: A100 80GB split 3g.40gb + 2 x 2g.20gb; GPU 1: H100 with 18
// NVLinks (link 7 erroring), GPM, per-process utilisation; GPU 2: H100 split
// 3g.40gb + 4g.40gb with GPM per instance.
FakeScenario datacenter() {
  FakeScenario s = FakeScenario::with_gpus(3);
  json& h = s.header["gpus"];
  h[0].update({{"mig_enabled", true}, {"memory_total_bytes", 80 * kGiB}});
  for (int i : {1, 2}) {
    h[i].update({{"name", "NVIDIA H100 80GB HBM3"},
                 {"architecture", "hopper"},
                 {"compute_capability", "9.0"},
                 {"memory_total_bytes", 80 * kGiB}});
  }
  h[1]["nvlink_count"] = 18;
  h[2]["mig_enabled"] = true;

  json& g = s.samples[0]["gpus"];
  g[0].erase("util_pct");
  g[0]["mig_instances"] = {mig(1, "3g.40gb", 40 * kGiB, 10 * kGiB),
                           mig(5, "2g.20gb", 20 * kGiB, 4 * kGiB),
                           mig(6, "2g.20gb", 20 * kGiB, 2 * kGiB)};
  g[0]["processes"] = {{{"pid", 101},
                        {"used_bytes", 10 * kGiB},
                        {"type", "compute"},
                        {"gi_id", 1},
                        {"ci_id", 0}},
                       {{"pid", 105},
                        {"used_bytes", 4 * kGiB},
                        {"type", "compute"},
                        {"gi_id", 5},
                        {"ci_id", 0}},
                       {{"pid", 106},
                        {"used_bytes", 2 * kGiB},
                        {"type", "compute"},
                        {"gi_id", 6},
                        {"ci_id", 0}}};
  json links = json::array();
  for (int l = 0; l < 18; ++l) {
    links.push_back({{"link", l},
                     {"active", true},
                     {"version", 4},
                     {"crc_errors_total", l == 7 ? 1234 : 0},
                     {"replay_total", l == 7 ? 56 : 0},
                     {"recovery_total", l == 7 ? 2 : 0}});
  }
  g[1].update(gpm(40.0));
  g[1].update({{"nvlinks", links},
               {"nvlink_tx_bytes_per_s", 100 * kGiB},
               {"nvlink_rx_bytes_per_s", 50 * kGiB},
               {"enc_util_pct", 0.0},
               {"dec_util_pct", 17.0},
               {"fabric_state", "completed"}});
  g[1]["processes"] = {{{"pid", 200},
                        {"used_bytes", 30 * kGiB},
                        {"type", "compute"},
                        {"sm_util_pct", 88.0},
                        {"mem_util_pct", 41.0}}};
  g[2].update(gpm(70.0));
  json a = mig(1, "3g.40gb", 40 * kGiB, 8 * kGiB);
  a.update(gpm(55.0));
  json b = mig(2, "4g.40gb", 40 * kGiB, 1 * kGiB);
  b.update(gpm(5.0));
  g[2]["mig_instances"] = {a, b};
  g[2]["processes"] = json::array();
  return s;
}

std::vector<gd::GpuSample> one_sample(
    gd::GpuSource& c, std::vector<gd::Event>* events = nullptr) {
  std::vector<gd::Event> local;
  auto out = c.sample(events ? *events : local);
  if (!events) {
    for (const auto& e : local) ADD_FAILURE() << e.text;
  }
  return out;
}

TEST(GpuSourceDatacenter, MigInstancesWithProfilesMemoryAndProcesses) {
  FakeScenario s = datacenter();
  s.install("dc_mig");
  gd::GpuSource c(fake_options());
  ASSERT_EQ(c.status(), gd::kNvmlOk) << c.error();
  const gd::GpuInfo& info = c.gpus()[0];
  EXPECT_EQ(info.mig_enabled, true);
  ASSERT_TRUE(info.mig_profiles);
  ASSERT_EQ(info.mig_profiles->size(), 3u);
  EXPECT_EQ((*info.mig_profiles)[0].profile, "3g.40gb");
  EXPECT_FALSE((*info.mig_profiles)[0].mem_used_bytes);  // static facts only

  auto g = one_sample(c)[0];
  ASSERT_TRUE(g.mig_instances);
  ASSERT_EQ(g.mig_instances->size(), 3u);
  const gd::MigInstance& m = (*g.mig_instances)[1];
  EXPECT_EQ(m.gi_id, 5u);
  EXPECT_EQ(m.ci_id, 0u);
  EXPECT_EQ(m.profile, "2g.20gb");
  EXPECT_EQ(m.uuid, "MIG-5c1e2d3f-0000-5111-8222-000000000005");
  EXPECT_EQ(m.mem_total_bytes, 20 * kGiB);
  EXPECT_EQ(m.mem_used_bytes, 4 * kGiB);
  EXPECT_FALSE(m.gpm.any());  // Ampere: no GPM, unknown rather than 0
  ASSERT_TRUE(g.processes);
  ASSERT_EQ(g.processes->size(), 3u);
  for (const auto& p : *g.processes) {
    EXPECT_EQ(p.gi_id, p.pid - 100) << p.pid;
    EXPECT_EQ(p.ci_id, 0u);
    EXPECT_FALSE(p.sm_util_pct) << "MIG GPUs keep no per-process samples";
  }
  EXPECT_FALSE(g.util_pct);
  EXPECT_FALSE(g.gpm.any());
  EXPECT_TRUE(g.read_errors.empty()) << g.read_errors[0];
}

TEST(GpuSourceDatacenter, NvlinksGpmProcessUtilisationAndFabric) {
  FakeScenario s = datacenter();
  s.install("dc_nvlink");
  gd::GpuSource c(fake_options());
  ASSERT_EQ(c.status(), gd::kNvmlOk) << c.error();
  EXPECT_EQ(c.gpus()[1].nvlink_count, 18);
  EXPECT_FALSE(c.gpus()[0].nvlink_count);  // the A100 here has none
  std::this_thread::sleep_for(100ms);      // an interval for the rates
  auto g = one_sample(c)[1];
  ASSERT_TRUE(g.nvlinks);
  ASSERT_EQ(g.nvlinks->size(), 18u);
  const gd::NvLink& l7 = (*g.nvlinks)[7];
  EXPECT_EQ(l7.link, 7);
  EXPECT_EQ(l7.active, true);
  EXPECT_EQ(l7.version, 4);  // NVML's enum 6 (4.0) is NVLink 4
  EXPECT_EQ(l7.crc_errors_total, 1234u);
  EXPECT_EQ(l7.replay_total, 56u);
  EXPECT_EQ(l7.recovery_total, 2u);
  EXPECT_EQ((*g.nvlinks)[0].crc_errors_total, 0u);
  ASSERT_TRUE(g.nvlink_tx_bytes_per_s);
  ASSERT_TRUE(g.nvlink_rx_bytes_per_s);
  EXPECT_NEAR(static_cast<double>(*g.nvlink_tx_bytes_per_s), 100.0 * kGiB,
              5.0 * kGiB);
  EXPECT_NEAR(static_cast<double>(*g.nvlink_rx_bytes_per_s), 50.0 * kGiB,
              2.5 * kGiB);
  EXPECT_DOUBLE_EQ(*g.gpm.sm_active_pct, 40.0);
  EXPECT_DOUBLE_EQ(*g.gpm.sm_occupancy_pct, 25.0);
  EXPECT_DOUBLE_EQ(*g.gpm.tensor_active_pct, 30.0);
  EXPECT_DOUBLE_EQ(*g.gpm.dram_active_pct, 60.0);
  EXPECT_DOUBLE_EQ(*g.gpm.fp64_active_pct, 0.0);
  EXPECT_DOUBLE_EQ(*g.gpm.fp32_active_pct, 12.0);
  EXPECT_DOUBLE_EQ(*g.gpm.fp16_active_pct, 20.0);
  EXPECT_DOUBLE_EQ(*g.gpm.gr_engine_active_pct, 95.0);
  EXPECT_EQ(g.dec_util_pct, 17.0);
  EXPECT_EQ(g.enc_util_pct, 0.0);
  EXPECT_EQ(g.fabric_state, gd::kFabricCompleted);
  ASSERT_TRUE(g.processes);
  EXPECT_EQ((*g.processes)[0].sm_util_pct, 88.0);
  EXPECT_EQ((*g.processes)[0].mem_util_pct, 41.0);
  EXPECT_FALSE((*g.processes)[0].gi_id);  // not on a MIG instance
  EXPECT_TRUE(g.read_errors.empty()) << g.read_errors[0];

  // A GPU without NVLink or GPM: unknown, not zero.
  auto a100 = one_sample(c)[0];
  EXPECT_FALSE(a100.nvlinks);
  EXPECT_FALSE(a100.nvlink_tx_bytes_per_s);
  EXPECT_TRUE(a100.fabric_state.empty());
}

TEST(GpuSourceDatacenter, GpmPerMigInstanceOnHopper) {
  FakeScenario s = datacenter();
  s.install("dc_hopper_mig");
  gd::GpuSource c(fake_options());
  ASSERT_EQ(c.status(), gd::kNvmlOk) << c.error();
  std::this_thread::sleep_for(20ms);
  auto g = one_sample(c)[2];
  ASSERT_TRUE(g.mig_instances);
  ASSERT_EQ(g.mig_instances->size(), 2u);
  EXPECT_DOUBLE_EQ(*(*g.mig_instances)[0].gpm.sm_active_pct, 55.0);
  EXPECT_DOUBLE_EQ(*(*g.mig_instances)[1].gpm.sm_active_pct, 5.0);
  EXPECT_EQ((*g.mig_instances)[1].profile, "4g.40gb");
  EXPECT_DOUBLE_EQ(*g.gpm.sm_active_pct, 70.0);
}

// GPU 1 at SM 40% for 0.3 s, then SM 80% from then on.
void install_gpm_change(const char* name) {
  FakeScenario s = datacenter();
  json second = s.samples[0];
  second["t"] = s.samples[0]["t"].get<double>() + 0.3;
  second["gpus"][1]["sm_active_pct"] = 80.0;
  s.samples.push_back(second);
  s.install(name);
}

TEST(GpuSourceDatacenter, GpmFollowsTheScenarioFromOneIntervalToTheNext) {
  install_gpm_change("dc_gpm_change");
  // GPM every sample (by default it is one of the costly reads).
  gd::GpuSource::Options o = fake_options();
  o.slow_read_interval = 0ms;
  gd::GpuSource c(o);
  ASSERT_EQ(c.status(), gd::kNvmlOk) << c.error();
  std::this_thread::sleep_for(500ms);
  auto first = one_sample(c)[1];  // from init to now: between 40 and 80
  ASSERT_TRUE(first.gpm.sm_active_pct);
  EXPECT_GT(*first.gpm.sm_active_pct, 40.5);
  EXPECT_LT(*first.gpm.sm_active_pct, 79.5);
  std::this_thread::sleep_for(50ms);
  auto later = one_sample(c)[1];  // wholly after the change
  EXPECT_DOUBLE_EQ(*later.gpm.sm_active_pct, 80.0);
}

// nvmlGpmMetricsGet costs 1.4 ms of CPU on an H200: between the costly
// reads a sample repeats the last interval's figures.
TEST(GpuSourceDatacenter, GpmRepeatsItsLastIntervalBetweenCostlyReads) {
  install_gpm_change("dc_gpm_repeat");
  gd::GpuSource c(fake_options());
  ASSERT_EQ(c.status(), gd::kNvmlOk) << c.error();
  std::this_thread::sleep_for(500ms);
  auto first = one_sample(c)[1];
  ASSERT_TRUE(first.gpm.sm_active_pct);
  std::this_thread::sleep_for(50ms);
  auto later = one_sample(c)[1];
  ASSERT_TRUE(later.gpm.sm_active_pct);
  EXPECT_DOUBLE_EQ(*later.gpm.sm_active_pct, *first.gpm.sm_active_pct);
  EXPECT_LT(*later.gpm.sm_active_pct, 79.5);
}

TEST(GpuSourceDatacenter, NvlinksReadLinkByLinkWithoutFieldValues) {
  FakeScenario s = datacenter();
  s.install("dc_nvlink_old");
  gd::GpuSource::Options o = fake_options();
  o.hidden_symbols = {"nvmlDeviceGetFieldValues"};
  gd::GpuSource c(o);
  ASSERT_EQ(c.status(), gd::kNvmlOk) << c.error();
  EXPECT_EQ(c.gpus()[1].nvlink_count,
            18);  // counted by nvmlDeviceGetNvLinkState
  auto g = one_sample(c)[1];
  ASSERT_TRUE(g.nvlinks);
  ASSERT_EQ(g.nvlinks->size(), 18u);
  EXPECT_EQ((*g.nvlinks)[7].crc_errors_total, 1234u);
  EXPECT_EQ((*g.nvlinks)[7].version, 4);
  EXPECT_FALSE(g.nvlink_tx_bytes_per_s);  // only field values carry it
}

TEST(GpuSourceDatacenter, OldLibraryHasNoGpmAndSaysNothingAboutIt) {
  FakeScenario s = datacenter();
  s.install("dc_old");
  gd::GpuSource c(fake_options(/*old_api=*/true));
  ASSERT_EQ(c.status(), gd::kNvmlOk) << c.error();
  auto g = one_sample(c);
  EXPECT_FALSE(g[1].gpm.any());
  EXPECT_TRUE(g[1].read_errors.empty());
  ASSERT_TRUE(g[0].mig_instances);  // MIG needs no newer symbol
  EXPECT_EQ(g[0].mig_instances->size(), 3u);
}

TEST(GpuSourceDatacenter, FailedGpmReadIsAReadErrorAndTheFieldsUnknown) {
  FakeScenario s = datacenter();
  s.header["faults"] = json::array(
      {{{"function", "nvmlGpmSampleGet"}, {"gpu", 1}, {"return", "UNKNOWN"}}});
  s.install("dc_gpm_fault");
  gd::GpuSource c(fake_options());
  ASSERT_EQ(c.status(), gd::kNvmlOk) << c.error();
  std::vector<gd::Event> events;
  auto g = c.sample(events)[1];
  EXPECT_FALSE(g.gpm.sm_active_pct);
  EXPECT_NE(
      std::find(g.read_errors.begin(), g.read_errors.end(), "sm_active_pct"),
      g.read_errors.end());
  EXPECT_FALSE(events.empty());
}

TEST(GpuSourceDatacenter, HungGpmCallMakesTheGpuStaleNotTheTool) {
  FakeScenario s = datacenter();
  s.header["faults"] = json::array(
      {{{"function", "nvmlGpmMetricsGet"}, {"gpu", 1}, {"hang_s", 30}}});
  s.install("dc_gpm_hang");
  gd::GpuSource::Options o = fake_options();
  o.deadline = 300ms;
  gd::GpuSource c(o);
  ASSERT_EQ(c.status(), gd::kNvmlOk) << c.error();
  std::vector<gd::Event> events;
  const auto t0 = std::chrono::steady_clock::now();
  auto g = c.sample(events);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
  EXPECT_TRUE(g[1].stale);
  EXPECT_FALSE(g[0].stale);
  EXPECT_FALSE(g[2].stale);
}

TEST(NvmlVocabulary, NvlinkVersionEnumIsTheGeneration) {
  EXPECT_EQ(gd::nvml::nvlink_generation(NVML_NVLINK_VERSION_3_1), 3);
  EXPECT_EQ(gd::nvml::nvlink_generation(NVML_NVLINK_VERSION_4_0), 4);
  EXPECT_EQ(gd::nvml::nvlink_generation(NVML_NVLINK_VERSION_5_0), 5);
  EXPECT_FALSE(gd::nvml::nvlink_generation(NVML_NVLINK_VERSION_INVALID));
  EXPECT_FALSE(gd::nvml::nvlink_generation(99));
  EXPECT_EQ(gd::nvml::mig_profile_short_name("MIG 3g.40gb"), "3g.40gb");
  EXPECT_EQ(gd::nvml::mig_profile_short_name("1g.10gb+me"), "1g.10gb+me");
}

}  // namespace
