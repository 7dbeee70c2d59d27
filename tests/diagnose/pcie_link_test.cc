// pcie-link-degraded: only a link that stays slow while data moves.
#include <gtest/gtest.h>

#include "scenario_builder.h"
#include "text_contains.h"

namespace gd::test {
namespace {

TEST(PcieLinkDegraded, LinkAtGen1UnderLoadIsWarningWithSpeeds) {
  auto h = make_header(2);
  Jitter j;
  auto samples = make_samples(300, 1.0, [&](size_t i, Sample& s) {
    s.gpus.push_back(busy_gpu(0, j));
    auto g = busy_gpu(1, j);
    g.pcie_gen = 1;
    g.pcie_replay_total = i / 3;  // replays keep growing
    s.gpus.push_back(g);
  });
  auto f = with_id(run_diagnose(h, samples), "pcie-link-degraded");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, "warning");
  EXPECT_EQ(f[0].gpus, std::vector<int>{1});
  EXPECT_TRUE(contains(
      f[0].evidence, "link at Gen1 x16 (max Gen4 x16) in 100% of 300 samples"))
      << f[0].evidence;
  EXPECT_TRUE(contains(f[0].evidence, "GB/s")) << f[0].evidence;
  EXPECT_TRUE(contains(f[0].evidence, "replay counter grew by 99"))
      << f[0].evidence;
  EXPECT_TRUE(contains(f[0].action, "BIOS")) << f[0].action;
}

TEST(PcieLinkDegraded, LostLanesPointAtSeating) {
  auto h = make_header(1);
  Jitter j;
  auto samples = make_samples(60, 1.0, [&](size_t, Sample& s) {
    auto g = busy_gpu(0, j);
    g.pcie_width = 8;
    s.gpus.push_back(g);
  });
  auto f = with_id(run_diagnose(h, samples), "pcie-link-degraded");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_TRUE(contains(f[0].evidence, "Gen4 x8 (max Gen4 x16)"))
      << f[0].evidence;
  EXPECT_TRUE(contains(f[0].action, "reseat")) << f[0].action;
}

TEST(PcieLinkDegraded, SilentWhenDownTrainedOnlyWhileIdle) {
  auto h = make_header(1);
  Jitter j;
  // Idle at Gen1 for 5 minutes, then load arrives and the link trains to
  // Gen4 — the normal power-saving pattern.
  auto samples = make_samples(600, 1.0, [&](size_t i, Sample& s) {
    s.gpus.push_back(i < 300 ? idle_gpu(0, j) : busy_gpu(0, j));
  });
  EXPECT_TRUE(with_id(run_diagnose(h, samples), "pcie-link-degraded").empty());
}

TEST(PcieLinkDegraded, SilentWhenOneSampleStraddlesTheRetrain) {
  auto h = make_header(1);
  Jitter j;
  auto samples = make_samples(120, 1.0, [&](size_t i, Sample& s) {
    auto g = i < 60 ? idle_gpu(0, j) : busy_gpu(0, j);
    if (i == 60) g.pcie_gen = 1;  // traffic already up, link not yet retrained
    s.gpus.push_back(g);
  });
  EXPECT_TRUE(with_id(run_diagnose(h, samples), "pcie-link-degraded").empty());
}

TEST(PcieLinkDegraded, SilentWhenMaxLinkUnknown) {
  auto h = make_header(1);
  h.gpus[0].pcie_max_gen.reset();
  h.gpus[0].pcie_max_width.reset();
  Jitter j;
  auto samples = make_samples(60, 1.0, [&](size_t, Sample& s) {
    auto g = busy_gpu(0, j);
    g.pcie_gen = 1;
    s.gpus.push_back(g);
  });
  EXPECT_TRUE(with_id(run_diagnose(h, samples), "pcie-link-degraded").empty());
}

}  // namespace
}  // namespace gd::test
