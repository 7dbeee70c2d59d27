// thermal-outlier: one GPU much hotter (or hungrier at idle) than identical
// peers under the same load; never across models, loads, or without peers.
#include <gtest/gtest.h>

#include "scenario_builder.h"
#include "text_contains.h"

namespace gd::test {
namespace {

// n GPUs for 120 s; `touch(g)` adjusts each GPU's reading.
DiagnoseResult run_gpus(const TraceHeader& h,
                        const std::function<void(GpuSample&)>& touch,
                        bool idle = false) {
  Jitter j;
  return run_diagnose(h, make_samples(120, 1.0, [&](size_t, Sample& s) {
                        for (const GpuInfo& info : h.gpus) {
                          GpuSample g = idle ? idle_gpu(info.index, j)
                                             : busy_gpu(info.index, j);
                          touch(g);
                          s.gpus.push_back(g);
                        }
                      }));
}

TEST(ThermalOutlier, OneHotGpuAmongIdenticalPeersIsAWarningWithNumbers) {
  auto h = make_header(4);
  h.gpus[2].temp_max_operating_c = 87;
  auto r = run_gpus(h, [](GpuSample& g) {
    if (g.index == 2) *g.temp_c += 16;
    g.temp_limit_margin_c = 89 - *g.temp_c;
  });
  auto f = with_id(r, "thermal-outlier");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, "warning");
  EXPECT_EQ(f[0].gpus, std::vector<int>{2});
  EXPECT_TRUE(contains(f[0].evidence, "vs the peers' median 70 C"))
      << f[0].evidence;
  EXPECT_TRUE(contains(f[0].evidence, "3 other NVIDIA A100-SXM4-80GB"))
      << f[0].evidence;
  EXPECT_TRUE(contains(f[0].evidence, "T.Limit margin")) << f[0].evidence;
  EXPECT_TRUE(contains(f[0].evidence, "max operating 87 C")) << f[0].evidence;
  EXPECT_TRUE(contains(f[0].action, "fan")) << f[0].action;
  EXPECT_TRUE(contains(f[0].action, "falls off the bus")) << f[0].action;
}

TEST(ThermalOutlier, OneGpuOnlyHasNoPeers) {
  auto h = make_header(1);
  auto r = run_gpus(h, [](GpuSample& g) { *g.temp_c += 16; });
  EXPECT_TRUE(with_id(r, "thermal-outlier").empty());
}

TEST(ThermalOutlier, DifferentModelsAreNotPeers) {
  auto h = make_header(2);
  h.gpus[1].name = "NVIDIA H100 80GB HBM3";
  auto r = run_gpus(h, [](GpuSample& g) {
    if (g.index == 1) *g.temp_c += 16;
  });
  EXPECT_TRUE(with_id(r, "thermal-outlier").empty());
}

TEST(ThermalOutlier, DifferentLoadsAreNotCompared) {
  auto h = make_header(2);
  auto r = run_gpus(h, [](GpuSample& g) {
    if (g.index == 0) return;
    g.util_pct = 40;  // GPU 1 works less and is cooler for it
    *g.temp_c -= 20;
  });
  EXPECT_TRUE(with_id(r, "thermal-outlier").empty());
}

TEST(ThermalOutlier, AFewDegreesOfSpreadIsNormal) {
  auto h = make_header(4);
  auto r = run_gpus(h, [](GpuSample& g) { *g.temp_c += 2 * g.index; });
  EXPECT_TRUE(with_id(r, "thermal-outlier").empty());
}

TEST(ThermalOutlier, AThrottledGpuIsThermalThrottlingsFinding) {
  auto h = make_header(2);
  auto r = run_gpus(h, [](GpuSample& g) {
    if (g.index != 1) return;
    *g.temp_c += 18;
    g.clock_event_reasons = std::vector<std::string>{"sw_thermal_slowdown"};
    g.sm_clock_mhz = 1005;
  });
  EXPECT_TRUE(with_id(r, "thermal-outlier").empty());
  EXPECT_EQ(with_id(r, "thermal-throttling").size(), 1u);
}

TEST(ThermalOutlier, IdleGpuDrawingFarMorePowerThanIdlePeers) {
  auto h = make_header(3);
  auto r = run_gpus(
      h,
      [](GpuSample& g) {
        if (g.index == 0) *g.power_w += 70;
      },
      true);
  auto f = with_id(r, "thermal-outlier");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].gpus, std::vector<int>{0});
  EXPECT_TRUE(contains(f[0].evidence, "at idle vs the idle peers' median"))
      << f[0].evidence;
}

}  // namespace
}  // namespace gd::test
