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

}  // namespace
}  // namespace gd::store
