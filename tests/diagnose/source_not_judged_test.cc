// Rules that live on one source (the kernel log, NVML, clock event reasons,
// NVLink state, row remapping) say they could not judge a window without
// it, instead of passing for "all is well"; with the source they judge.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "scenario_builder.h"
#include "views/diagnose_report.h"

namespace gd::test {
namespace {

// A minute of a busy, healthy GPU 0, as `edit` changes each reading.
std::vector<Sample> minute(const std::function<void(GpuSample&)>& edit =
                               [](GpuSample&) {}) {
  Jitter j;
  return make_samples(60, 1.0, [&](size_t, Sample& s) {
    GpuSample g = busy_gpu(0, j);
    edit(g);
    s.gpus = {g};
  });
}

TEST(SourceNotJudged, KernelLogRulesNeedTheKernelLog) {
  TraceHeader h = make_header(1);
  h.kernel_log_error =
      "cannot open /dev/kmsg: Operation not permitted (reading the kernel "
      "log needs root or CAP_SYSLOG when kernel.dmesg_restrict=1)";
  auto r = run_diagnose(h, minute());
  const NotJudged* aer = not_judged(r, "pcie-aer-errors");
  ASSERT_NE(aer, nullptr);
  EXPECT_EQ(aer->reason,
            "needs the kernel log's PCIe AER lines; cannot open /dev/kmsg: "
            "Operation not permitted (reading the kernel log needs root or "
            "CAP_SYSLOG when kernel.dmesg_restrict=1)");
  ASSERT_NE(not_judged(r, "xid-error"), nullptr);
  EXPECT_EQ(
      not_judged(r, "xid-error")
          ->reason.rfind("needs the kernel log's Xid lines; cannot open", 0),
      0u);
  ASSERT_NE(not_judged(r, "host-oom-kill"), nullptr);
  // The text report never says all is well, and names the rules.
  std::string text = format_text_report(r, h);
  EXPECT_EQ(text.find("All is well"), std::string::npos) << text;
  EXPECT_NE(text.find("pcie-aer-errors: needs the kernel log"),
            std::string::npos)
      << text;
}

TEST(SourceNotJudged, WithTheKernelLogReadEveryRuleJudgesAMinute) {
  // The same minute with the log read: nothing is left unjudged by these
  // rules (the 5-minute rules judge too: nothing they look for was there).
  auto r = run_diagnose(make_header(1), minute());
  for (const char* id :
       {"pcie-aer-errors", "xid-error", "host-oom-kill", "gpu-lost",
        "power-brake", "nvlink-degraded", "memory-degrading"})
    EXPECT_EQ(not_judged(r, id), nullptr) << id;
}

TEST(SourceNotJudged, GpuLostNeedsNvml) {
  TraceHeader h = make_header(0);
  h.nvml_status = kNvmlNoDriver;
  h.driver.reset();
  auto r = run_diagnose(h, make_samples(10, 1.0, [](size_t, Sample&) {}));
  const NotJudged* n = not_judged(r, "gpu-lost");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->reason,
            "needs NVML to watch the GPUs; it did not start "
            "(no_driver)");
}

TEST(SourceNotJudged, PowerBrakeNeedsClockEventReasons) {
  auto r =
      run_diagnose(make_header(1),
                   minute([](GpuSample& g) { g.clock_event_reasons.reset(); }));
  const NotJudged* n = not_judged(r, "power-brake");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->reason,
            "needs the GPUs' clock event reasons; the driver gave none in 60 "
            "readings");
}

TEST(SourceNotJudged, ABrakeOnlyAsTheWindowEndsIsNotJudgedAndABlipIs) {
  Jitter j;
  auto braked_at = [&](std::vector<size_t> on) {
    return make_samples(30, 1.0, [&](size_t i, Sample& s) {
      GpuSample g = busy_gpu(0, j);
      if (std::count(on.begin(), on.end(), i))
        g.clock_event_reasons =
            std::vector<std::string>{"hw_power_brake_slowdown"};
      s.gpus = {g};
    });
  };
  auto ending = run_diagnose(make_header(1), braked_at({28, 29}));
  EXPECT_TRUE(with_id(ending, "power-brake").empty());
  const NotJudged* n = not_judged(ending, "power-brake");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->reason,
            "needs 3 samples of a power brake in a row; the window has 2");
  // Two samples in the middle, then released: a blip, judged as one.
  auto blip = run_diagnose(make_header(1), braked_at({10, 11}));
  EXPECT_TRUE(with_id(blip, "power-brake").empty());
  EXPECT_EQ(not_judged(blip, "power-brake"), nullptr);
}

TEST(SourceNotJudged, NvlinkNeedsTheStateOfLinksTheGpuHas) {
  TraceHeader h = make_header(1);
  h.gpus[0].nvlink_count = 12;
  auto r = run_diagnose(h, minute());
  const NotJudged* n = not_judged(r, "nvlink-degraded");
  ASSERT_NE(n, nullptr);
  EXPECT_NE(n->reason.find("needs the state of GPU 0"), std::string::npos)
      << n->reason;
  EXPECT_NE(n->reason.find("12 NVLinks; the driver gave none"),
            std::string::npos)
      << n->reason;
  // A GPU without NVLink is judged: there is nothing to degrade.
  h.gpus[0].nvlink_count = 0;
  EXPECT_EQ(not_judged(run_diagnose(h, minute()), "nvlink-degraded"), nullptr);
}

TEST(SourceNotJudged, MemoryDegradingNeedsRowRemapping) {
  auto r = run_diagnose(make_header(1), minute([](GpuSample& g) {
                          g.remapped_rows_pending.reset();
                          g.remapped_rows_failure.reset();
                        }));
  const NotJudged* n = not_judged(r, "memory-degrading");
  ASSERT_NE(n, nullptr);
  EXPECT_NE(n->reason.find("row-remapping counters; the driver gave none in "
                           "60 readings"),
            std::string::npos)
      << n->reason;
}

TEST(SourceNotJudged, RulesAboutProcessesNeedTheProcessLists) {
  // A window read from an exporter's series: GPU readings, no processes.
  auto r = run_diagnose(make_header(1),
                        minute([](GpuSample& g) { g.processes.reset(); }));
  for (const char* id :
       {"input-bound", "memory-leak", "gpu-idle-allocated", "orphaned-memory",
        "memory-underused", "gpu-shared-contention", "cpu-contention",
        "gpu-imbalance", "dev-shm-small", "driver-cuda-mismatch"}) {
    const NotJudged* n = not_judged(r, id);
    ASSERT_NE(n, nullptr) << id;
    EXPECT_EQ(n->reason,
              "needs the GPUs' process lists (as gpudoctor record and serve "
              "keep them); none came with the 60 GPU readings")
        << id;
  }
  // An empty list is a list: nobody on the GPU is judged.
  auto empty = run_diagnose(make_header(1), minute());
  EXPECT_EQ(not_judged(empty, "input-bound"), nullptr);
}

}  // namespace
}  // namespace gd::test
