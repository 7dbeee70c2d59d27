// tensor-cores-unused and memory-underused: where a job wastes the GPU it
// holds, and the look-alikes that must stay silent.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "scenario_builder.h"

namespace gd::test {
namespace {

constexpr uint64_t kEfficiencyMiB = 1ull << 20;

// `n` samples at 1 Hz of GPU 0 running pid 7000 (20 GiB), as `edit` makes
// each reading.
DiagnoseResult job(size_t n, const std::function<void(GpuSample&)>& edit,
                   TraceHeader h = make_header(1)) {
  Jitter j;
  auto samples = make_samples(n, 1.0, [&](size_t, Sample& s) {
    GpuSample g = busy_gpu(0, j);
    g.mem_used_bytes = 20 * kGiB + 512 * kEfficiencyMiB;
    g.processes = std::vector<GpuProcess>{{7000, 20 * kGiB, "compute"}};
    edit(g);
    s.gpus = {g};
    s.processes.push_back(process(7000, "train"));
  });
  return run_diagnose(h, samples);
}

void plain_fp32(GpuSample& g) {
  g.gpm.sm_active_pct = 85;
  g.gpm.fp32_active_pct = 61;
  g.gpm.tensor_active_pct = 0.2;
  g.gpm.fp64_active_pct = 0;
}

TEST(TensorCoresUnused, PlainFp32OnATensorCoreGpuIsNamedWithItsProcess) {
  auto r = job(60, plain_fp32);
  auto f = with_id(r, "tensor-cores-unused");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, "info");
  EXPECT_EQ(f[0].gpus, std::vector<int>{0});
  EXPECT_EQ(f[0].pids, std::vector<uint32_t>{7000});
  EXPECT_NE(f[0].evidence.find("FP32 pipe active 61%"), std::string::npos)
      << f[0].evidence;
  EXPECT_NE(f[0].action.find("allow_tf32"), std::string::npos);
}

TEST(TensorCoresUnused, Fp64WorkNoTensorCoresOrBusyTensorCoresAreSilent) {
  auto fp64 = job(60, [](GpuSample& g) {
    plain_fp32(g);
    g.gpm.fp32_active_pct = 15;
    g.gpm.fp64_active_pct = 70;
  });
  EXPECT_TRUE(with_id(fp64, "tensor-cores-unused").empty());
  TraceHeader pascal = make_header(1);
  pascal.gpus[0].compute_capability = "6.0";
  EXPECT_TRUE(
      with_id(job(60, plain_fp32, pascal), "tensor-cores-unused").empty());
  auto tensors = job(60, [](GpuSample& g) {
    plain_fp32(g);
    g.gpm.tensor_active_pct = 45;
  });
  EXPECT_TRUE(with_id(tensors, "tensor-cores-unused").empty());
  EXPECT_EQ(not_judged(tensors, "tensor-cores-unused"), nullptr);
}

TEST(TensorCoresUnused, AMostlyIdleGpuIsSilent) {
  size_t i = 0;
  auto r = job(60, [&](GpuSample& g) {
    plain_fp32(g);
    g.util_pct = (i++ % 4 == 0) ? 90 : 3;  // busy a quarter of the time
  });
  EXPECT_TRUE(with_id(r, "tensor-cores-unused").empty());
  EXPECT_EQ(not_judged(r, "tensor-cores-unused"), nullptr);
}

TEST(TensorCoresUnused, WithoutGpmABusyGpuIsNotJudged) {
  auto r = job(60, [](GpuSample&) {});  // an A100: NVML gives it no GPM
  EXPECT_TRUE(with_id(r, "tensor-cores-unused").empty());
  const NotJudged* n = not_judged(r, "tensor-cores-unused");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->reason,
            "needs GPM FP32 and tensor-core activity of a busy GPU (Hopper and "
            "newer); the driver gave none in 60 readings");
}

TEST(TensorCoresUnused, TenSamplesOfThePatternAreNotJudged) {
  auto r = job(10, plain_fp32);
  EXPECT_TRUE(with_id(r, "tensor-cores-unused").empty());
  const NotJudged* n = not_judged(r, "tensor-cores-unused");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->reason,
            "needs 30 samples of a busy GPU on its FP32 pipe with idle tensor "
            "cores; the window has 10");
}

// 8 GiB of an 80 GiB GPU at ~35% util.
void small_batch(GpuSample& g) {
  g.util_pct = 35;
  g.mem_used_bytes = 8 * kGiB + 512 * kEfficiencyMiB;
  g.processes = std::vector<GpuProcess>{{7000, 8 * kGiB, "compute"}};
}

TEST(MemoryUnderused, ASmallJobOnABigGpuForTheWholeWindowIsNamed) {
  auto r = job(400, small_batch);
  auto f = with_id(r, "memory-underused");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, "info");
  EXPECT_EQ(f[0].pids, std::vector<uint32_t>{7000});
  EXPECT_NE(f[0].evidence.find("peak GPU memory 8.0 GiB of 80.0 GiB"),
            std::string::npos)
      << f[0].evidence;
  EXPECT_NE(f[0].evidence.find("util 35%"), std::string::npos) << f[0].evidence;
  EXPECT_NE(f[0].action.find("MIG"), std::string::npos);
}

TEST(MemoryUnderused, ComputeBoundIdleOrPartOfTheWindowIsSilent) {
  auto busy = job(400, [](GpuSample& g) {
    small_batch(g);
    g.util_pct = 96;
  });
  EXPECT_TRUE(with_id(busy, "memory-underused").empty());
  auto idle = job(400, [](GpuSample& g) {
    small_batch(g);
    g.util_pct = 2;
  });
  EXPECT_TRUE(with_id(idle, "memory-underused").empty());
  size_t i = 0;
  auto late = job(400, [&](GpuSample& g) {
    small_batch(g);
    if (i++ < 200) g.processes = std::vector<GpuProcess>{};  // starts late
  });
  EXPECT_TRUE(with_id(late, "memory-underused").empty());
  EXPECT_TRUE(with_id(job(400, [](GpuSample&) {}), "memory-underused")
                  .empty());  // 20 GiB of 80: a quarter
}

TEST(MemoryUnderused, AShortWindowIsNotJudged) {
  auto r = job(120, small_batch);
  EXPECT_TRUE(with_id(r, "memory-underused").empty());
  const NotJudged* n = not_judged(r, "memory-underused");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->reason,
            "needs 5 min of a job holding a GPU with little of its memory; the "
            "window has 119 s");
}

}  // namespace
}  // namespace gd::test
