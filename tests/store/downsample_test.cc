// Averaging of one tier into the next.
#include "store/downsample.h"

#include <gtest/gtest.h>

#include "store_test_util.h"

namespace gd::store {
namespace {

using testing::kT0;
using testing::make_sample;

TEST(Downsample, UnknownValuesAreLeftOutOfTheAverage) {
  std::vector<Sample> in;
  for (int i = 0; i < 4; ++i) in.push_back(make_sample(kT0 + i, i, 1));
  in[0].gpus[0].util_pct = 10;
  in[1].gpus[0].util_pct.reset();
  in[2].gpus[0].util_pct = 20;
  in[3].gpus[0].util_pct = 33.3333;
  for (auto& s : in) s.gpus[0].fan_pct.reset();
  auto out = downsample(in, 60);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_DOUBLE_EQ(*out[0].gpus[0].util_pct,
                   21.111);  // (10+20+33.3333)/3, 3 decimals
  EXPECT_FALSE(out[0].gpus[0].fan_pct.has_value());
}

// A counter's minute is its last value, not a mean nobody reported: the
// growth a rule sees in the minute tier is the growth that happened.
TEST(Downsample, CountersKeepTheirLastValue) {
  std::vector<Sample> in;
  for (int i = 0; i < 4; ++i) in.push_back(make_sample(kT0 + i, i, 1));
  const uint64_t remapped[] = {1, 1, 2, 7};
  for (int i = 0; i < 4; ++i) {
    in[i].gpus[0].remapped_rows_correctable_total = remapped[i];
    in[i].gpus[0].energy_mj_total = 1000 * (i + 1);
    in[i].host.kernel_lines_unclassified_total = 10 + i;
    in[i].gpus[0].temp_limit_margin_c = 20 + i;  // a gauge: averaged
  }
  auto out = downsample(in, 60);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(*out[0].gpus[0].remapped_rows_correctable_total, 7u);
  EXPECT_EQ(*out[0].gpus[0].energy_mj_total, 4000u);
  EXPECT_EQ(*out[0].host.kernel_lines_unclassified_total, 13u);
  EXPECT_EQ(*out[0].gpus[0].temp_limit_margin_c, 22);  // 21.5 rounded
}

// A read that failed once in the minute is still named; who held the device
// files is the last list the minute saw.
TEST(Downsample, ReadErrorsAreUnitedAndDeviceHoldersKept) {
  std::vector<Sample> in;
  for (int i = 0; i < 3; ++i) in.push_back(make_sample(kT0 + i, i, 1));
  in[0].gpus[0].read_errors = {"power_w"};
  in[1].gpus[0].read_errors = {"temp_c", "power_w"};
  in[1].device_holders = std::vector<DeviceHolder>{{77, {"nvidia0"}}};
  auto out = downsample(in, 60);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].gpus[0].read_errors,
            (std::vector<std::string>{"power_w", "temp_c"}));
  ASSERT_TRUE(out[0].device_holders.has_value());
  EXPECT_EQ((*out[0].device_holders)[0].pid, 77u);
}

TEST(Downsample, ReasonsAreUnitedAndLostGpuHasNoValues) {
  std::vector<Sample> in;
  for (int i = 0; i < 3; ++i) in.push_back(make_sample(kT0 + i, i, 2));
  in[0].gpus[0].clock_event_reasons = std::vector<std::string>{"sw_power_cap"};
  in[1].gpus[0].clock_event_reasons =
      std::vector<std::string>{"hw_slowdown", "sw_power_cap"};
  in[2].gpus[1] = GpuSample{};
  in[2].gpus[1].index = 1;
  in[2].gpus[1].lost = true;
  auto out = downsample(in, 60);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(*out[0].gpus[0].clock_event_reasons,
            (std::vector<std::string>{"sw_power_cap", "hw_slowdown"}));
  EXPECT_TRUE(out[0].gpus[1].lost);
  EXPECT_FALSE(out[0].gpus[1].util_pct.has_value());
}

TEST(Downsample, OneSamplePerBucketEndingAtItsLastSample) {
  std::vector<Sample> in;
  for (int i = 0; i < 150; ++i) in.push_back(make_sample(kT0 + 30 + i, i, 1));
  auto out = downsample(in, 60);
  ASSERT_EQ(out.size(), 3u);  // [30,60) [60,120) [120,180)
  EXPECT_EQ(out[0].t, kT0 + 59);
  EXPECT_EQ(out[1].t, kT0 + 119);
  EXPECT_EQ(out[2].t, kT0 + 179);
  EXPECT_DOUBLE_EQ(*out[0].gpus[0].power_w, 100.5 + 14.5);  // i = 0..29
}

// A minute keeps who took the CPUs: each process's mean over the samples
// that looked (0 where it was not among the busiest), busiest first.
TEST(Downsample, OtherCpuTopIsEachProcessesMeanOverTheSamplesThatLooked) {
  std::vector<Sample> in;
  for (int i = 0; i < 5; ++i) in.push_back(make_sample(kT0 + i, i, 1));
  using L = std::vector<OtherCpuProcess>;
  in[0].host.other_cpu_top = L{{7, "yes", "bob", std::nullopt, 90},
                               {8, "gzip", "bob", std::nullopt, 10}};
  in[1].host.other_cpu_top = L{{8, "gzip", "bob", std::nullopt, 50}};
  // in[2] did not look: it does not count.
  in[3].host.other_cpu_top = L{{7, "yes", "bob", std::nullopt, 30},
                               {8, "gzip", "bob", "docker:abc", 90}};
  in[4].host.other_cpu_top = L{};
  auto out = downsample(in, 60);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_TRUE(out[0].host.other_cpu_top.has_value());
  const auto& top = *out[0].host.other_cpu_top;
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0].pid, 8u);  // (10 + 50 + 90) / 4
  EXPECT_DOUBLE_EQ(top[0].cpu_pct, 37.5);
  EXPECT_EQ(top[0].container, "docker:abc") << "named as last seen";
  EXPECT_EQ(top[1].pid, 7u);  // (90 + 30) / 4
  EXPECT_DOUBLE_EQ(top[1].cpu_pct, 30);

  // No sample of the minute looked: not looked.
  for (auto& s : in) s.host.other_cpu_top.reset();
  EXPECT_FALSE(downsample(in, 60)[0].host.other_cpu_top.has_value());
}

}  // namespace
}  // namespace gd::store
