// ecc-uncorrectable and ecc-reset-required.
#include <gtest/gtest.h>

#include "scenario_builder.h"
#include "text_contains.h"

namespace gd::test {
namespace {

TEST(EccUncorrectable, DoubleBitErrorGrowthIsCriticalWithCounts) {
  auto h = make_header(2);
  Jitter j;
  auto samples = make_samples(300, 1.0, [&](size_t i, Sample& s) {
    s.gpus.push_back(busy_gpu(0, j));
    auto g = busy_gpu(1, j);
    g.ecc_sbe_volatile_total = 10 + i / 10;
    g.ecc_dbe_volatile_total = i < 150 ? 1 : 3;  // +2 at 150 s
    s.gpus.push_back(g);
  });
  auto f = with_id(run_diagnose(h, samples), "ecc-uncorrectable");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, "critical");
  EXPECT_EQ(f[0].gpus, std::vector<int>{1});
  EXPECT_TRUE(contains(f[0].evidence, "grew by 2 (from 1 to 3)"))
      << f[0].evidence;
  EXPECT_DOUBLE_EQ(f[0].start, kT0 + 150);
}

TEST(EccUncorrectable, SilentWhenOnlyCorrectableErrorsGrow) {
  auto h = make_header(1);
  Jitter j;
  auto samples = make_samples(600, 1.0, [&](size_t i, Sample& s) {
    auto g = busy_gpu(0, j);
    g.ecc_sbe_volatile_total = 100 + i * 3;  // lots of single-bit errors
    g.ecc_dbe_volatile_total = 0;
    s.gpus.push_back(g);
  });
  auto r = run_diagnose(h, samples);
  EXPECT_TRUE(with_id(r, "ecc-uncorrectable").empty());
  EXPECT_TRUE(with_id(r, "ecc-reset-required").empty());
}

TEST(EccUncorrectable, RowRemapFailureIsCriticalAndSaysRma) {
  auto h = make_header(1);
  Jitter j;
  auto samples = make_samples(30, 1.0, [&](size_t, Sample& s) {
    auto g = busy_gpu(0, j);
    g.remapped_rows_failure = true;
    s.gpus.push_back(g);
  });
  auto f = with_id(run_diagnose(h, samples), "ecc-uncorrectable");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_TRUE(
      contains(f[0].evidence, "remapped_rows_failure true in 30 samples"))
      << f[0].evidence;
  EXPECT_TRUE(contains(f[0].action, "RMA")) << f[0].action;
}

TEST(EccUncorrectable, UnknownCountersAreNotZeroAndDoNotFire) {
  auto h = make_header(1);
  Jitter j;
  auto samples = make_samples(30, 1.0, [&](size_t i, Sample& s) {
    auto g = busy_gpu(0, j);
    // ECC unsupported/unknown on alternate samples: null must not read as a
    // drop to 0 followed by "growth" back to 5.
    if (i % 2)
      g.ecc_dbe_volatile_total.reset();
    else
      g.ecc_dbe_volatile_total = 5;
    g.retired_pages_pending.reset();
    g.remapped_rows_failure.reset();
    s.gpus.push_back(g);
  });
  EXPECT_TRUE(with_id(run_diagnose(h, samples), "ecc-uncorrectable").empty());
}

TEST(EccResetRequired, PendingRowRemapIsWarning) {
  auto h = make_header(2);
  Jitter j;
  auto samples = make_samples(60, 1.0, [&](size_t, Sample& s) {
    auto g = busy_gpu(0, j);
    g.remapped_rows_pending = true;
    s.gpus.push_back(g);
    s.gpus.push_back(busy_gpu(1, j));
  });
  auto f = with_id(run_diagnose(h, samples), "ecc-reset-required");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, "warning");
  EXPECT_EQ(f[0].gpus, std::vector<int>{0});
  EXPECT_TRUE(
      contains(f[0].evidence, "remapped_rows_pending true in 60 samples"))
      << f[0].evidence;
  EXPECT_TRUE(contains(f[0].action, "nvidia-smi -r -i 0")) << f[0].action;
}

TEST(EccResetRequired, SilentWhenPendingClearedByResetDuringWindow) {
  auto h = make_header(1);
  Jitter j;
  auto samples = make_samples(60, 1.0, [&](size_t i, Sample& s) {
    auto g = busy_gpu(0, j);
    g.remapped_rows_pending = i < 30;  // GPU reset at 30 s applied the remap
    s.gpus.push_back(g);
    if (i == 5)
      s.events.push_back(
          xid_event(0, 63,
                    "NVRM: Xid (PCI:0000:07:00): 63, Row Remapper: New row "
                    "marked for remapping, reset gpu to activate."));
  });
  EXPECT_TRUE(with_id(run_diagnose(h, samples), "ecc-reset-required").empty());
}

TEST(EccResetRequired, Xid63WithUnknownFlagsStillFires) {
  auto h = make_header(1);
  Jitter j;
  auto samples = make_samples(10, 1.0, [&](size_t i, Sample& s) {
    auto g = busy_gpu(0, j);
    g.remapped_rows_pending.reset();
    g.retired_pages_pending.reset();
    s.gpus.push_back(g);
    if (i == 2)
      s.events.push_back(
          xid_event(0, 63,
                    "NVRM: Xid (PCI:0000:07:00): 63, Row Remapper: New row "
                    "marked for remapping, reset gpu to activate."));
  });
  auto f = with_id(run_diagnose(h, samples), "ecc-reset-required");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_TRUE(contains(f[0].evidence, "Xid 63")) << f[0].evidence;
}

}  // namespace
}  // namespace gd::test
