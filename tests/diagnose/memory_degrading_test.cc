// memory-degrading: worn-out memory (remapped rows growing, banks running out
// of spare rows, a failed remap, SRAM threshold) vs the one pending remap
// that ecc-reset-required owns.
#include <gtest/gtest.h>

#include "scenario_builder.h"
#include "text_contains.h"

namespace gd::test {
namespace {

// GPU 0 busy for 120 s; `touch` sets its remapper fields per second.
DiagnoseResult run_gpu0(const std::function<void(size_t, GpuSample&)>& touch) {
  auto h = make_header(1);
  Jitter j;
  return run_diagnose(h, make_samples(120, 1.0, [&](size_t i, Sample& s) {
                        GpuSample g = busy_gpu(0, j);
                        touch(i, g);
                        s.gpus.push_back(g);
                      }));
}

const RowRemapHistogram kPlenty{640, 0, 0, 0, 0};

TEST(MemoryDegrading, RowsGrowingIsCriticalWithTheCountsAndRmaAdvice) {
  auto r = run_gpu0([](size_t i, GpuSample& g) {
    g.remapped_rows_correctable_total = 3 + i / 40;  // 3 -> 5
    g.remapped_rows_uncorrectable_total = 0;
    g.row_remap_histogram = kPlenty;
  });
  auto f = with_id(r, "memory-degrading");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, "critical");
  EXPECT_EQ(f[0].gpus, std::vector<int>{0});
  EXPECT_TRUE(contains(f[0].evidence, "correctable 3 -> 5")) << f[0].evidence;
  EXPECT_TRUE(contains(f[0].evidence, "uncorrectable 0")) << f[0].evidence;
  EXPECT_TRUE(contains(f[0].evidence, "max 640 high 0 partial 0 low 0 none 0"))
      << f[0].evidence;
  EXPECT_TRUE(contains(f[0].action, "nvidia-smi -q -d ROW_REMAPPER -i 0"))
      << f[0].action;
  EXPECT_TRUE(contains(f[0].action, "RMA")) << f[0].action;
  EXPECT_TRUE(contains(f[0].action, "Drain GPU 0")) << f[0].action;
  EXPECT_EQ(diagnose_exit_code(r), 2);
}

TEST(MemoryDegrading, OneCorrectableRemapWithSpareRowsIsOnlyAPendingReset) {
  auto r = run_gpu0([](size_t i, GpuSample& g) {
    g.remapped_rows_correctable_total = i < 60 ? 0 : 1;
    g.remapped_rows_uncorrectable_total = 0;
    g.remapped_rows_pending = i >= 60;
    g.row_remap_histogram = kPlenty;
  });
  EXPECT_TRUE(with_id(r, "memory-degrading").empty());
  EXPECT_EQ(with_id(r, "ecc-reset-required").size(), 1u);
}

TEST(MemoryDegrading, CountsNotGrowingAndHistogramHealthyStaySilent) {
  auto r = run_gpu0([](size_t, GpuSample& g) {
    g.remapped_rows_correctable_total = 7;  // old remaps, long applied
    g.remapped_rows_uncorrectable_total = 1;
    g.row_remap_histogram = RowRemapHistogram{630, 8, 2, 0, 0};
  });
  EXPECT_TRUE(with_id(r, "memory-degrading").empty());
}

TEST(MemoryDegrading, UnknownCountersAndHistogramStaySilent) {
  // Older GPUs and traces without the fields: nothing to judge.
  auto r = run_gpu0([](size_t, GpuSample&) {});
  EXPECT_TRUE(with_id(r, "memory-degrading").empty());
}

TEST(MemoryDegrading, ABankWithoutSpareRowsFiresWithoutGrowth) {
  auto r = run_gpu0([](size_t, GpuSample& g) {
    g.remapped_rows_correctable_total = 12;
    g.remapped_rows_uncorrectable_total = 2;
    g.row_remap_histogram = RowRemapHistogram{620, 10, 4, 1, 1};
  });
  auto f = with_id(r, "memory-degrading");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_TRUE(contains(f[0].evidence, "few or no spare rows")) << f[0].evidence;
  EXPECT_TRUE(contains(f[0].evidence, "low 1 none 1")) << f[0].evidence;
}

TEST(MemoryDegrading, RemapFailureAndSramThresholdEachFire) {
  auto failed = run_gpu0(
      [](size_t i, GpuSample& g) { g.remapped_rows_failure = i >= 100; });
  auto f = with_id(failed, "memory-degrading");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_TRUE(contains(f[0].evidence, "row remapping failed")) << f[0].evidence;

  auto sram = run_gpu0([](size_t, GpuSample& g) {
    g.ecc_sram_threshold_exceeded = true;
    g.ecc_sram_uncorrectable_aggregate_total = 4;
  });
  f = with_id(sram, "memory-degrading");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_TRUE(contains(f[0].evidence, "SRAM uncorrectable ECC threshold"))
      << f[0].evidence;
  EXPECT_TRUE(contains(f[0].evidence, "4 SRAM uncorrectable")) << f[0].evidence;
}

TEST(MemoryDegrading, APendingRemapAfterAFailedOneHandsOverToRma) {
  auto r = run_gpu0([](size_t i, GpuSample& g) {
    g.remapped_rows_pending = i >= 60;
    g.remapped_rows_failure = i >= 60;
  });
  ASSERT_EQ(with_id(r, "memory-degrading").size(), 1u);
  auto reset = with_id(r, "ecc-reset-required");
  ASSERT_EQ(reset.size(), 1u);
  // A reset applies the pending repair but never clears a failed remap.
  EXPECT_FALSE(contains(reset[0].action, "Remapping Failure: No"))
      << reset[0].action;
  EXPECT_TRUE(contains(reset[0].action, "see memory-degrading"))
      << reset[0].action;
}

TEST(MemoryDegrading, ThresholdsComeFromTheConfig) {
  auto h = make_header(1);
  Jitter j;
  auto samples = make_samples(120, 1.0, [&](size_t i, Sample& s) {
    GpuSample g = busy_gpu(0, j);
    g.remapped_rows_correctable_total = 3 + i / 40;  // +2
    s.gpus.push_back(g);
  });
  DiagnoseOptions options;
  options.config.set("memory-degrading.correctable_rows_growth_count", 3);
  EXPECT_TRUE(
      with_id(run_diagnose(h, samples, options), "memory-degrading").empty());
}

}  // namespace
}  // namespace gd::test
