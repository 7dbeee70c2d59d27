// The all-reduce's verdict: every branch, from figures a run could give.
#include "burn/collective_verdict.h"

#include <gtest/gtest.h>

#include "burn/collective.h"
#include "cuda/nccl_library.h"

namespace gd::burn {
namespace {

constexpr const char* kA100 = "NVIDIA A100-SXM4-80GB";

CollectiveResult measured(double busbw_gbps, int gpus = 8) {
  CollectiveResult r;
  r.asked = r.ran = true;
  for (int i = 0; i < gpus; ++i) r.gpus.push_back(i);
  r.bytes = 64 << 20;
  r.iterations = 20;
  r.link = "NVLink";
  r.busbw_bytes_per_s = busbw_gbps * 1e9;
  r.algbw_bytes_per_s = busbw_gbps * 1e9 * gpus / (2.0 * (gpus - 1));
  r.checked = 8 * (16 << 20);
  return r;
}

TEST(CollectiveBusBandwidth, IsNcclTestsDefinition) {
  // 8 ranks: 2 x 7 / 8 = 1.75.
  EXPECT_DOUBLE_EQ(*all_reduce_bus_bandwidth(100e9, 8), 175e9);
  EXPECT_DOUBLE_EQ(*all_reduce_bus_bandwidth(100e9, 2), 100e9);
  EXPECT_FALSE(all_reduce_bus_bandwidth(100e9, 1));
}

TEST(CollectiveVerdict, NotAskedSaysNothing) {
  EXPECT_EQ(judge_collective(CollectiveResult{}, kA100).verdict, "");
}

TEST(CollectiveVerdict, PassAtThePublishedFigure) {
  auto v = judge_collective(measured(236), kA100);
  EXPECT_EQ(v.verdict, "pass");
  ASSERT_TRUE(v.reference);
  EXPECT_DOUBLE_EQ(v.reference->low_bytes_per_s, 230e9);
  EXPECT_NE(v.reasons.at(0).find("236.0 GB/s"), std::string::npos);
  EXPECT_NE(v.reasons.at(0).find("230.0 GB/s-250.0 GB/s"), std::string::npos);
}

TEST(CollectiveVerdict, PassJustAboveTheFloor) {
  EXPECT_EQ(judge_collective(measured(230 * 0.81), kA100).verdict, "pass");
}

TEST(CollectiveVerdict, WarnBelowTheFloorWithAdviceAndTheRunsNcclSettings) {
  auto r = measured(120);
  r.nccl_env = "NCCL_P2P_DISABLE=1";
  auto v = judge_collective(r, kA100);
  EXPECT_EQ(v.verdict, "warn");
  EXPECT_EQ(collective_severity(v), 1);
  const std::string& why = v.reasons.at(0);
  EXPECT_NE(why.find("52%"), std::string::npos) << why;
  EXPECT_NE(why.find("nvidia-smi nvlink -s"), std::string::npos);
  EXPECT_NE(why.find("this run had NCCL_P2P_DISABLE=1"), std::string::npos);
}

TEST(CollectiveVerdict, H100RowsTellSxmFromPcie) {
  EXPECT_EQ(judge_collective(measured(300), "NVIDIA H100 80GB HBM3").verdict,
            "warn");
  EXPECT_EQ(judge_collective(measured(470), "NVIDIA H100 80GB HBM3").verdict,
            "pass");
  auto pcie = measured(40);
  pcie.link = "PCIe";
  EXPECT_EQ(judge_collective(pcie, "NVIDIA H100 PCIe").verdict, "pass");
  // H100 NVL is not the SXM board: no row.
  EXPECT_EQ(judge_collective(measured(300), "NVIDIA H100 NVL").verdict,
            "not judged");
}

TEST(CollectiveVerdict, NotJudgedWithoutAFigureForThisNode) {
  auto four = judge_collective(measured(200, 4), kA100);
  EXPECT_EQ(four.verdict, "not judged");
  EXPECT_NE(four.reasons.at(0).find("no published figure for 4"),
            std::string::npos);
  EXPECT_EQ(judge_collective(measured(200), "").verdict, "not judged");
  auto unknown_link = measured(200);
  unknown_link.link.clear();
  auto v = judge_collective(unknown_link, kA100);
  EXPECT_EQ(v.verdict, "not judged");
  EXPECT_NE(v.reasons.at(0).find("NVLink is unknown"), std::string::npos);
}

TEST(CollectiveVerdict, OneGpuIsALoopbackNotABusBandwidth) {
  CollectiveResult r = measured(0, 1);
  r.busbw_bytes_per_s.reset();
  r.algbw_bytes_per_s = 800e9;
  r.loopback = true;
  auto v = judge_collective(r, kA100);
  EXPECT_EQ(v.verdict, "not judged");
  EXPECT_NE(v.reasons.at(0).find("loopback"), std::string::npos);
}

TEST(CollectiveVerdict, FailOnWrongResultsErrorOrHang) {
  auto wrong = measured(236);
  wrong.wrong = 3;
  wrong.wrong_by_gpu = {{1, 3}};
  auto v = judge_collective(wrong, kA100);
  EXPECT_EQ(v.verdict, "fail");
  EXPECT_EQ(collective_severity(v), 2);
  EXPECT_NE(v.reasons.at(0).find("GPU 1: 3"), std::string::npos);

  auto error = measured(236);
  error.error = "ncclAllReduce: invalid argument (4)";
  EXPECT_EQ(judge_collective(error, kA100).verdict, "fail");
  auto hung = measured(236);
  hung.hung = true;
  EXPECT_EQ(judge_collective(hung, kA100).verdict, "fail");
}

TEST(CollectiveVerdict, NotRunSaysWhy) {
  CollectiveResult r;
  r.asked = true;
  r.skipped = "no GPU came through its own tests to take part";
  auto v = judge_collective(r, kA100);
  EXPECT_EQ(v.verdict, "not run");
  EXPECT_EQ(v.reasons.at(0), r.skipped);
}

TEST(NcclVersion, BothEncodings) {
  EXPECT_EQ(cuda::nccl_version_text(22105), "2.21.5");
  EXPECT_EQ(cuda::nccl_version_text(2804), "2.8.4");
  EXPECT_EQ(cuda::nccl_version_text(0), "");
}

}  // namespace
}  // namespace gd::burn
