// thermal-throttling, power-brake, power-capping: clock-event reasons read
// together with utilisation, clocks, temperature and power.
#include <gtest/gtest.h>

#include "scenario_builder.h"
#include "text_contains.h"

namespace gd::test {
namespace {

using Reasons = std::vector<std::string>;

TEST(ThermalThrottling, BusyGpuHeldDownBySwThermalIsWarningWithNumbers) {
  auto h = make_header(2);
  Jitter j;
  auto samples = make_samples(600, 1.0, [&](size_t i, Sample& s) {
    s.gpus.push_back(busy_gpu(0, j));
    auto g = busy_gpu(1, j);
    g.temp_c = static_cast<int>(87 + j(1));
    if (i % 25 != 0) {  // 96% of the time
      g.clock_event_reasons = Reasons{"sw_thermal_slowdown"};
      g.sm_clock_mhz = static_cast<int>(1050 + j(30));
    }
    s.gpus.push_back(g);
  });
  auto f = with_id(run_diagnose(h, samples), "thermal-throttling");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, "warning");
  EXPECT_EQ(f[0].gpus, std::vector<int>{1});
  EXPECT_TRUE(contains(f[0].evidence,
                       "sw_thermal_slowdown active in 96% of 600 busy samples"))
      << f[0].evidence;
  EXPECT_TRUE(contains(f[0].evidence, "vs max 1410 MHz")) << f[0].evidence;
  EXPECT_TRUE(contains(f[0].evidence, "vs slowdown 89 C")) << f[0].evidence;
  EXPECT_TRUE(contains(f[0].evidence, "SM clock avg 10"))
      << f[0].evidence;  // ~1050 MHz
  EXPECT_TRUE(contains(f[0].action, "Only this GPU of 2")) << f[0].action;
}

TEST(ThermalThrottling, SilentWhenHotButNoThermalReasonAndClocksAtMax) {
  auto h = make_header(1);
  Jitter j;
  auto samples = make_samples(600, 1.0, [&](size_t, Sample& s) {
    auto g = busy_gpu(0, j);
    g.temp_c = static_cast<int>(87 + j(1.5));
    g.sm_clock_mhz = 1410;
    g.clock_event_reasons = Reasons{};
    s.gpus.push_back(g);
  });
  EXPECT_TRUE(with_id(run_diagnose(h, samples), "thermal-throttling").empty());
}

TEST(ThermalThrottling, SilentWhenThermalReasonOnlyWhileIdle) {
  auto h = make_header(1);
  Jitter j;
  auto samples = make_samples(120, 1.0, [&](size_t, Sample& s) {
    auto g = idle_gpu(0, j);
    g.clock_event_reasons = Reasons{"gpu_idle", "sw_thermal_slowdown"};
    s.gpus.push_back(g);
  });
  EXPECT_TRUE(with_id(run_diagnose(h, samples), "thermal-throttling").empty());
}

TEST(ThermalThrottling, SilentWhenReasonsUnknown) {
  auto h = make_header(1);
  Jitter j;
  auto samples = make_samples(120, 1.0, [&](size_t, Sample& s) {
    auto g = busy_gpu(0, j);
    g.clock_event_reasons
        .reset();  // not supported: not "none active", not "thermal"
    g.temp_c = 88;
    g.sm_clock_mhz = 900;
    s.gpus.push_back(g);
  });
  EXPECT_TRUE(with_id(run_diagnose(h, samples), "thermal-throttling").empty());
}

TEST(PowerBrake, HwPowerBrakeWithoutHeatIsCritical) {
  auto h = make_header(1);
  h.gpus[0].power_limit_w = 300;
  Jitter j;
  auto samples = make_samples(300, 1.0, [&](size_t i, Sample& s) {
    auto g = busy_gpu(0, j);
    if (i >= 100 && i < 220) {
      g.clock_event_reasons = Reasons{"hw_slowdown", "hw_power_brake_slowdown"};
      g.sm_clock_mhz = static_cast<int>(630 + j(20));
      g.power_w = 85 + j(5);
      g.temp_c = 45;
    }
    s.gpus.push_back(g);
  });
  auto f = with_id(run_diagnose(h, samples), "power-brake");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, "critical");
  EXPECT_EQ(f[0].gpus, std::vector<int>{0});
  EXPECT_TRUE(contains(f[0].evidence,
                       "hw_power_brake_slowdown active in 120 of 300 samples"))
      << f[0].evidence;
  EXPECT_TRUE(contains(f[0].evidence, "longest 120 consecutive"))
      << f[0].evidence;
  EXPECT_TRUE(contains(f[0].evidence, "of 300 W limit")) << f[0].evidence;
  EXPECT_TRUE(contains(f[0].action, "BMC")) << f[0].action;
  EXPECT_DOUBLE_EQ(f[0].start, kT0 + 100);
  EXPECT_DOUBLE_EQ(f[0].end, kT0 + 219);
  // The brake is not reported as thermal throttling.
  EXPECT_TRUE(with_id(run_diagnose(h, samples), "thermal-throttling").empty());
}

TEST(PowerBrake, SilentForBriefHwSlowdownBlipsDuringClockChanges) {
  auto h = make_header(1);
  Jitter j;
  auto samples = make_samples(600, 1.0, [&](size_t i, Sample& s) {
    auto g = busy_gpu(0, j);
    if (i % 100 == 0)
      g.clock_event_reasons = Reasons{"hw_slowdown"};  // single-sample blips
    s.gpus.push_back(g);
  });
  EXPECT_TRUE(with_id(run_diagnose(h, samples), "power-brake").empty());
}

TEST(PowerBrake, SilentWhenHwSlowdownIsThermal) {
  auto h = make_header(1);
  Jitter j;
  auto samples = make_samples(120, 1.0, [&](size_t, Sample& s) {
    auto g = busy_gpu(0, j);
    g.clock_event_reasons = Reasons{"hw_slowdown", "hw_thermal_slowdown"};
    g.temp_c = 90;
    g.sm_clock_mhz = 700;
    s.gpus.push_back(g);
  });
  auto r = run_diagnose(h, samples);
  EXPECT_TRUE(with_id(r, "power-brake").empty());
  EXPECT_EQ(with_id(r, "thermal-throttling").size(), 1u);
}

TEST(PowerCapping, CapHoldingClocksWellUnderMaxIsInfoAndNamesLoweredLimit) {
  auto h = make_header(1);
  h.gpus[0].power_limit_w = 250;
  Jitter j;
  auto samples = make_samples(300, 1.0, [&](size_t, Sample& s) {
    auto g = busy_gpu(0, j);
    g.clock_event_reasons = Reasons{"sw_power_cap"};
    g.sm_clock_mhz = static_cast<int>(1100 + j(40));
    g.power_w = 249 + j(1);
    s.gpus.push_back(g);
  });
  auto f = with_id(run_diagnose(h, samples), "power-capping");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, "info");
  EXPECT_TRUE(contains(f[0].evidence, "vs max 1410 MHz")) << f[0].evidence;
  EXPECT_TRUE(contains(f[0].evidence, "at a 250 W limit (default 400 W)"))
      << f[0].evidence;
  EXPECT_TRUE(contains(f[0].action, "nvidia-smi -i 0 -pl 400")) << f[0].action;
}

TEST(PowerCapping, SilentWhenCappedButClocksNearMax) {
  auto h = make_header(1);
  Jitter j;
  auto samples = make_samples(300, 1.0, [&](size_t, Sample& s) {
    auto g = busy_gpu(0, j);
    g.clock_event_reasons = Reasons{"sw_power_cap"};
    g.sm_clock_mhz = static_cast<int>(1380 + j(20));
    g.power_w = 398 + j(2);
    s.gpus.push_back(g);
  });
  EXPECT_TRUE(with_id(run_diagnose(h, samples), "power-capping").empty());
}

TEST(PowerCapping, SilentWhenMaxClockUnknown) {
  auto h = make_header(1);
  h.gpus[0].sm_clock_max_mhz.reset();
  Jitter j;
  auto samples = make_samples(300, 1.0, [&](size_t, Sample& s) {
    auto g = busy_gpu(0, j);
    g.clock_event_reasons = Reasons{"sw_power_cap"};
    g.sm_clock_mhz = 900;
    s.gpus.push_back(g);
  });
  EXPECT_TRUE(with_id(run_diagnose(h, samples), "power-capping").empty());
}

}  // namespace
}  // namespace gd::test
