#include <gtest/gtest.h>

#include <atomic>
#include <nlohmann/json.hpp>
#include <random>

#include "views/leak_view.h"

namespace gd::procmgmt {
namespace {

constexpr double kLeakMiB = 1024.0 * 1024.0;
constexpr double kT0 = 1.7e9;  // Unix time: the slope must survive its size

Sample sample_at(double t, std::vector<std::pair<uint32_t, uint64_t>> procs,
                 uint64_t gpu_used) {
  Sample s;
  s.t = t;
  GpuSample g;
  g.index = 0;
  g.mem_used_bytes = gpu_used;
  std::vector<GpuProcess> ps;
  for (auto [pid, bytes] : procs) {
    GpuProcess p;
    p.pid = pid;
    p.used_bytes = bytes;
    ps.push_back(p);
  }
  g.processes = ps;
  s.gpus.push_back(g);
  return s;
}

TEST(LeastSquares, ExactLineAtUnixTime) {
  std::vector<Point> pts;
  for (int i = 0; i < 10; ++i)
    pts.push_back({kT0 + i * 0.5, 1000.0 + 3.0 * i * 0.5});
  auto slope = least_squares_slope(pts);
  ASSERT_TRUE(slope);
  EXPECT_NEAR(*slope, 3.0, 1e-9);
  EXPECT_FALSE(least_squares_slope({{kT0, 1}}));
  EXPECT_FALSE(least_squares_slope({{kT0, 1}, {kT0, 2}}));
}

TEST(LeastSquares, NoisyGrowthIsFound) {
  std::mt19937 rng(3);
  std::normal_distribution<double> noise(0, 50 * kLeakMiB);
  std::vector<Point> pts;
  // 20 MiB/min over 30 minutes with 50 MiB of noise.
  for (int i = 0; i < 180; ++i)
    pts.push_back(
        {kT0 + i * 10.0, 8e9 + 20 * kLeakMiB / 60 * i * 10.0 + noise(rng)});
  EXPECT_NEAR(*least_squares_slope(pts) * 60 / kLeakMiB, 20.0, 1.0);
}

TEST(LeakTracker, GrowthRateAndTimeToFull) {
  const uint64_t total = 80ull << 30;
  LeakTracker t({{0, total}});
  // pid 10 grows 60 MiB/min (1 MiB/s), pid 20 stays; the GPU ends with 8 GiB
  // free.
  for (int i = 0; i <= 10; ++i) {
    uint64_t grow = (1ull << 30) + static_cast<uint64_t>(i) * (1ull << 20);
    t.add(sample_at(kT0 + i, {{10, grow}, {20, 5ull << 30}},
                    total - (8ull << 30)));
  }
  auto es = t.estimates();
  ASSERT_EQ(es.size(), 2u);
  EXPECT_EQ(es[0].pid, 10u);
  EXPECT_NEAR(*es[0].slope_mib_per_min, 60.0, 1e-6);
  EXPECT_TRUE(es[0].leaking);
  EXPECT_EQ(es[0].gpu_free_bytes, 8ull << 30);
  EXPECT_NEAR(*es[0].time_to_full_s, 8 * 1024.0, 1e-3);  // 8 GiB at 1 MiB/s
  EXPECT_EQ(es[1].pid, 20u);
  EXPECT_NEAR(*es[1].slope_mib_per_min, 0.0, 1e-9);
  EXPECT_FALSE(es[1].leaking);
  EXPECT_FALSE(es[1].time_to_full_s);
  auto j = nlohmann::json::parse(leaks_to_json(es, t.samples()));
  EXPECT_EQ(j["samples"], 11);
  EXPECT_EQ(j["processes"][0]["pid"], 10);
  EXPECT_NE(render_leaks(es, t.samples()).find("GROWING"), std::string::npos);
}

TEST(LeakTracker, TooFewPointsAndEndedProcesses) {
  LeakTracker t({{0, 80ull << 30}});
  t.add(sample_at(kT0, {{10, 1 << 20}, {20, 1 << 20}}, 1 << 30));
  t.add(sample_at(kT0 + 1, {{10, 2 << 20}, {20, 2 << 20}}, 1 << 30));
  t.add(sample_at(kT0 + 2, {{10, 3 << 20}}, 1 << 30));
  auto es = t.estimates();
  ASSERT_EQ(es.size(), 2u);
  const auto& ten = es[0].pid == 10 ? es[0] : es[1];
  const auto& twenty = es[0].pid == 20 ? es[0] : es[1];
  EXPECT_TRUE(ten.slope_mib_per_min);
  EXPECT_FALSE(twenty.slope_mib_per_min);  // 2 points
  EXPECT_TRUE(twenty.ended);
  EXPECT_FALSE(twenty.leaking);
}

TEST(LeakTracker, FiltersByPidAndGpu) {
  LeakTracker only10({{0, 1ull << 34}}, 10u);
  only10.add(sample_at(kT0, {{10, 1}, {20, 2}}, 3));
  ASSERT_EQ(only10.estimates().size(), 1u);
  EXPECT_EQ(only10.estimates()[0].pid, 10u);
  LeakTracker gpu1({{0, 1ull << 34}}, std::nullopt, {1});
  gpu1.add(sample_at(kT0, {{10, 1}}, 3));
  EXPECT_TRUE(gpu1.estimates().empty());
}

// The watch loop: a sample at once, then one per interval within the
// duration; a stop request ends it with what was seen.
TEST(WatchLeaks, SamplesAtOnceThenEachIntervalWithinTheDuration) {
  LeakTracker t({{0, 80ull << 30}});
  std::atomic<bool> stop{false};
  double clock = kT0;
  std::vector<size_t> progress;
  watch_leaks(
      t,
      [&] {
        return sample_at(clock++, {{10, 1 << 20}}, 1 << 30);
      },
      0.02, 0.07, stop, [&](size_t n) { progress.push_back(n); });
  EXPECT_EQ(t.samples(), 4u);  // at 0, 20, 40, 60 ms; 80 ms is past 70 ms
  EXPECT_EQ(progress, (std::vector<size_t>{1, 2, 3, 4}));
}

TEST(WatchLeaks, StopEndsTheWatch) {
  LeakTracker t({{0, 80ull << 30}});
  std::atomic<bool> stop{false};
  double clock = kT0;
  watch_leaks(
      t,
      [&] {
        if (clock >= kT0 + 1) stop = true;  // Ctrl-C during the 2nd sample
        return sample_at(clock++, {{10, 1 << 20}}, 1 << 30);
      },
      0.01, 3600, stop);
  EXPECT_EQ(t.samples(), 2u);
}

}  // namespace
}  // namespace gd::procmgmt
