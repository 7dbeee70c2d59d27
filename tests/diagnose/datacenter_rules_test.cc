// nvlink-degraded and low-sm-efficiency at their edges: growth vs a counter
// reset or one jump, a link down alone vs with its peers down too, GPM on a
// busy vs an idle GPU, a MIG GPU without util.
#include <gtest/gtest.h>

#include "scenario_builder.h"
#include "text_contains.h"

namespace gd::test {
namespace {

std::vector<NvLink> links(int n) {
  std::vector<NvLink> out;
  for (int l = 0; l < n; ++l) {
    NvLink link;
    link.link = l;
    link.active = true;
    link.version = 4;
    link.crc_errors_total = 0;
    link.replay_total = 0;
    link.recovery_total = 0;
    out.push_back(link);
  }
  return out;
}

// 2 GPUs with 18 links each for 120 s; `touch(i, g)` adjusts sample i.
DiagnoseResult run_links(const std::function<void(size_t, GpuSample&)>& touch) {
  auto h = make_header(2);
  for (auto& g : h.gpus) g.nvlink_count = 18;
  Jitter j;
  return run_diagnose(h, make_samples(120, 1.0, [&](size_t i, Sample& s) {
                        for (const GpuInfo& info : h.gpus) {
                          GpuSample g = busy_gpu(info.index, j);
                          g.nvlinks = links(18);
                          touch(i, g);
                          s.gpus.push_back(g);
                        }
                      }));
}

TEST(NvlinkDegraded, GrowingCrcErrorsAreAWarningNamingTheLink) {
  auto r = run_links([](size_t i, GpuSample& g) {
    if (g.index == 1) (*g.nvlinks)[7].crc_errors_total = 1000 + 50 * i;
  });
  auto f = with_id(r, "nvlink-degraded");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, "warning");
  EXPECT_EQ(f[0].gpus, std::vector<int>{1});
  EXPECT_TRUE(contains(f[0].title, "NVLink 7 is logging errors")) << f[0].title;
  EXPECT_TRUE(contains(f[0].evidence, "+5950 CRC errors")) << f[0].evidence;
  EXPECT_TRUE(contains(f[0].evidence, "50.0 CRC errors/s")) << f[0].evidence;
  EXPECT_TRUE(contains(f[0].evidence, "the GPU has 18 links")) << f[0].evidence;
  EXPECT_TRUE(contains(f[0].action, "nvidia-smi nvlink -e -i 1"))
      << f[0].action;
}

TEST(NvlinkDegraded, ALinkDownWhileTheOthersAreUp) {
  auto r = run_links([](size_t i, GpuSample& g) {
    if (g.index == 0 && i >= 30) (*g.nvlinks)[3].active = false;
  });
  auto f = with_id(r, "nvlink-degraded");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_TRUE(contains(f[0].title, "NVLink 3 is down")) << f[0].title;
  EXPECT_TRUE(contains(f[0].evidence, "down in 90 of 120 samples"))
      << f[0].evidence;
}

TEST(NvlinkDegraded, OldErrorsThatDoNotGrowAreSilent) {
  auto r = run_links([](size_t, GpuSample& g) {
    (*g.nvlinks)[7].crc_errors_total = 48213;
    (*g.nvlinks)[7].replay_total = 977;
  });
  EXPECT_TRUE(with_id(r, "nvlink-degraded").empty());
}

TEST(NvlinkDegraded, OneJumpOrACounterResetIsNotGrowth) {
  // One jump of 500 (a burst during a reset, say) grows in one sample only;
  // a counter that drops to 0 (the driver reset it) is a new baseline.
  auto r = run_links([](size_t i, GpuSample& g) {
    if (g.index != 0) return;
    (*g.nvlinks)[2].crc_errors_total = i < 60 ? 0 : 500;
    (*g.nvlinks)[4].crc_errors_total = i < 60 ? 90000 : 3;
  });
  EXPECT_TRUE(with_id(r, "nvlink-degraded").empty());
}

TEST(NvlinkDegraded, EveryLinkDownIsNotThisFinding) {
  // No link of the host is up (no fabric at all): not "down while its peers
  // are up".
  auto r = run_links([](size_t, GpuSample& g) {
    for (NvLink& l : *g.nvlinks) l.active = false;
  });
  EXPECT_TRUE(with_id(r, "nvlink-degraded").empty());
}

TEST(NvlinkDegraded, AGpuWithoutNvlinkIsSilent) {
  auto h = make_header(2);
  Jitter j;
  auto r = run_diagnose(h, make_samples(120, 1.0, [&](size_t, Sample& s) {
                          for (const GpuInfo& info : h.gpus)
                            s.gpus.push_back(busy_gpu(info.index, j));
                        }));
  EXPECT_TRUE(with_id(r, "nvlink-degraded").empty());
}

// One GPU for 120 s with GPM: util `util`, SMs active `sm`.
DiagnoseResult run_gpm(double util, std::optional<double> sm,
                       bool mig = false) {
  auto h = make_header(1);
  h.gpus[0].architecture = "hopper";
  h.gpus[0].mig_enabled = mig;
  Jitter j;
  return run_diagnose(h, make_samples(120, 1.0, [&](size_t, Sample& s) {
                        GpuSample g = busy_gpu(0, j);
                        g.util_pct = util + j(1);
                        if (mig) g.util_pct.reset();
                        g.gpm.sm_active_pct = sm;
                        g.gpm.sm_occupancy_pct = 7.0;
                        g.gpm.tensor_active_pct = 3.0;
                        s.gpus.push_back(g);
                      }));
}

TEST(LowSmEfficiency, BusyByUtilIdleByTheSmsIsInfo) {
  auto f = with_id(run_gpm(95, 20), "low-sm-efficiency");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, "info");
  EXPECT_TRUE(contains(f[0].evidence, "util 95% but SMs active 20% (GPM)"))
      << f[0].evidence;
  EXPECT_TRUE(contains(f[0].evidence, "SM occupancy 7%")) << f[0].evidence;
  EXPECT_TRUE(contains(f[0].evidence, "tensor cores active 3%"))
      << f[0].evidence;
  EXPECT_TRUE(contains(f[0].action, "CUDA graphs")) << f[0].action;
}

TEST(LowSmEfficiency, SilentWhenTheSmsAreBusyToo) {
  EXPECT_TRUE(with_id(run_gpm(95, 85), "low-sm-efficiency").empty());
  // Exactly half of util is not "well under half".
  EXPECT_TRUE(with_id(run_gpm(90, 46), "low-sm-efficiency").empty());
}

TEST(LowSmEfficiency, SilentWithoutGpmOrWhenUtilIsLowOrUnknown) {
  EXPECT_TRUE(with_id(run_gpm(95, std::nullopt), "low-sm-efficiency").empty());
  EXPECT_TRUE(with_id(run_gpm(40, 10), "low-sm-efficiency").empty());
  // A MIG-enabled GPU has no util to compare with.
  EXPECT_TRUE(with_id(run_gpm(95, 20, true), "low-sm-efficiency").empty());
}

}  // namespace
}  // namespace gd::test
