// gpu-lost and xid-error: a GPU that falls off the bus mid-trace, Xid events
// explained by cause class, unknown codes.
#include <gtest/gtest.h>

#include "scenario_builder.h"
#include "text_contains.h"

namespace gd::test {
namespace {

TEST(GpuLost, GpuThatFallsOffTheBusMidTraceIsCriticalWithLastReading) {
  auto h = make_header(2);
  Jitter j;
  auto samples = make_samples(120, 1.0, [&](size_t i, Sample& s) {
    s.gpus.push_back(busy_gpu(0, j));
    if (i < 60) {
      auto g = busy_gpu(1, j);
      g.temp_c = 88;  // hot right before it vanished
      s.gpus.push_back(g);
    } else {
      s.gpus.push_back(lost_gpu(1));
    }
    if (i == 60)
      s.events.push_back(xid_event(
          1, 79,
          "NVRM: Xid (PCI:0000:08:00): 79, GPU has fallen off the bus."));
  });
  auto r = run_diagnose(h, samples);
  auto lost = with_id(r, "gpu-lost");
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_EQ(lost[0].severity, "critical");
  EXPECT_EQ(lost[0].gpus, std::vector<int>{1});
  EXPECT_TRUE(contains(lost[0].evidence, "60 samples")) << lost[0].evidence;
  EXPECT_TRUE(contains(lost[0].evidence, "88 C")) << lost[0].evidence;
  EXPECT_TRUE(contains(lost[0].evidence, "Xid 79")) << lost[0].evidence;
  EXPECT_TRUE(contains(lost[0].action, "thermal limit")) << lost[0].action;
  EXPECT_DOUBLE_EQ(lost[0].start, kT0 + 60);
  // The Xid itself is explained too, and the lost samples do not make any
  // other GPU-health rule produce nonsense for GPU 1.
  auto xid = with_id(r, "xid-error");
  ASSERT_EQ(xid.size(), 1u);
  EXPECT_EQ(xid[0].severity, "critical");
  for (const auto& f : r.findings)
    if (is_gpu_health_id(f.id) && f.id != "gpu-lost" && f.id != "xid-error")
      ADD_FAILURE() << f.id << ": " << f.evidence;
}

// A kernel line read long after it was logged (check reads the log since
// boot; a trace replays an old one): its own stamp is when it happened, in
// the evidence and in the finding's start, whatever sample brought it.
TEST(GpuLost, AnXidIsDatedByItsKernelStampNotTheSampleThatReadIt) {
  auto h = make_header(2);
  Jitter j;
  const double logged = kT0 - 86400 + 0.5;  // a day before the window
  auto samples = make_samples(30, 1.0, [&](size_t i, Sample& s) {
    s.gpus.push_back(busy_gpu(0, j));
    s.gpus.push_back(busy_gpu(1, j));
    if (i == 10) {
      s.events.push_back(xid_event(
          1, 79,
          "NVRM: Xid (PCI:0000:08:00): 79, GPU has fallen off the bus."));
      s.events.back().logged_at = logged;
    }
    if (i == 20)  // the same line without a stamp: the sample's time
      s.events.push_back(xid_event(
          1, 79,
          "NVRM: Xid (PCI:0000:08:00): 79, GPU has fallen off the bus."));
  });
  auto r = run_diagnose(h, samples);
  for (const char* id : {"xid-error", "gpu-lost"}) {
    auto f = with_id(r, id);
    ASSERT_EQ(f.size(), 1u) << id;
    EXPECT_DOUBLE_EQ(f[0].start, logged) << id;
    EXPECT_GE(f[0].end, kT0 + 20) << id;
    EXPECT_TRUE(contains(f[0].evidence, format_time(logged).substr(0, 19)))
        << f[0].evidence;
  }
}

TEST(GpuLost, HealthyGpusProduceNoLostFinding) {
  auto h = make_header(2);
  Jitter j;
  auto samples = make_samples(60, 1.0, [&](size_t, Sample& s) {
    s.gpus.push_back(busy_gpu(0, j));
    s.gpus.push_back(idle_gpu(1, j));
  });
  EXPECT_TRUE(with_id(run_diagnose(h, samples), "gpu-lost").empty());
}

TEST(GpuLost, GpuLostOnEverySampleDoesNotCrashAnyRule) {
  auto h = make_header(1);
  auto samples = make_samples(
      30, 1.0, [&](size_t, Sample& s) { s.gpus.push_back(lost_gpu(0)); });
  auto r = run_diagnose(h, samples);
  auto lost = with_id(r, "gpu-lost");
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_TRUE(contains(lost[0].evidence, "30 samples")) << lost[0].evidence;
}

TEST(XidError, ApplicationXidIsWarningAndNamesThePid) {
  auto h = make_header(1);
  Jitter j;
  auto samples = make_samples(10, 1.0, [&](size_t i, Sample& s) {
    s.gpus.push_back(busy_gpu(0, j));
    if (i == 3)
      s.events.push_back(xid_event(
          0, 13,
          "NVRM: Xid (PCI:0000:07:00): 13, pid=4242, name=python, Graphics "
          "SM Warp Exception",
          4242));
  });
  auto xid = with_id(run_diagnose(h, samples), "xid-error");
  ASSERT_EQ(xid.size(), 1u);
  EXPECT_EQ(xid[0].severity, "warning");
  EXPECT_EQ(xid[0].gpus, std::vector<int>{0});
  EXPECT_EQ(xid[0].pids, std::vector<uint32_t>{4242});
  EXPECT_TRUE(contains(xid[0].evidence, "Xid 13")) << xid[0].evidence;
  EXPECT_TRUE(contains(xid[0].evidence, "application")) << xid[0].evidence;
  EXPECT_TRUE(contains(xid[0].action, "compute-sanitizer")) << xid[0].action;
}

TEST(XidError, RepeatedXidsOfOneCodeAreOneFindingWithCountAndRange) {
  auto h = make_header(1);
  Jitter j;
  auto samples = make_samples(100, 1.0, [&](size_t i, Sample& s) {
    s.gpus.push_back(busy_gpu(0, j));
    if (i % 20 == 5)
      s.events.push_back(xid_event(0, 31,
                                   "NVRM: Xid (PCI:0000:07:00): 31, pid=" +
                                       std::to_string(100 + i) + ", MMU Fault",
                                   static_cast<uint32_t>(100 + i)));
  });
  auto xid = with_id(run_diagnose(h, samples), "xid-error");
  ASSERT_EQ(xid.size(), 1u);
  EXPECT_TRUE(contains(xid[0].evidence, "5 times")) << xid[0].evidence;
  EXPECT_EQ(xid[0].pids.size(), 5u);
  EXPECT_DOUBLE_EQ(xid[0].start, kT0 + 5);
  EXPECT_DOUBLE_EQ(xid[0].end, kT0 + 85);
  EXPECT_TRUE(contains(xid[0].action, "DCGM")) << xid[0].action;
}

TEST(XidError, UnknownCodeStillAFindingCarryingTheRawLine) {
  auto h = make_header(1);
  const std::string raw = "NVRM: Xid (PCI:0000:07:00): 999, something new";
  auto samples = make_samples(3, 1.0, [&](size_t i, Sample& s) {
    if (i == 1) s.events.push_back(xid_event(0, 999, raw));
  });
  auto xid = with_id(run_diagnose(h, samples), "xid-error");
  ASSERT_EQ(xid.size(), 1u);
  EXPECT_EQ(xid[0].severity, "warning");
  EXPECT_TRUE(contains(xid[0].evidence, raw)) << xid[0].evidence;
  EXPECT_TRUE(contains(xid[0].title, "999")) << xid[0].title;
}

TEST(XidError, XidOnUnmatchedPciAddressHasNoGpuButIsReported) {
  auto h = make_header(1);
  auto samples = make_samples(3, 1.0, [&](size_t i, Sample& s) {
    if (i == 1)
      s.events.push_back(
          xid_event(std::nullopt, 48, "NVRM: Xid (PCI:0000:99:00): 48, DBE"));
  });
  auto xid = with_id(run_diagnose(h, samples), "xid-error");
  ASSERT_EQ(xid.size(), 1u);
  EXPECT_EQ(xid[0].severity, "critical");
  EXPECT_TRUE(xid[0].gpus.empty());
}

TEST(XidError, RecoveryActionNoneIsInfoButResetRequiredIsCritical) {
  auto h = make_header(2);
  auto samples = make_samples(3, 1.0, [&](size_t i, Sample& s) {
    if (i == 1) {
      s.events.push_back(xid_event(
          0, 154,
          "NVRM: Xid (PCI:0000:07:00): 154, GPU recovery action changed "
          "from 0x0 (None) to 0x1 (GPU Reset Required)"));
      s.events.push_back(xid_event(
          1, 154,
          "NVRM: Xid (PCI:0000:08:00): 154, GPU recovery action changed "
          "from 0x1 (GPU Reset Required) to 0x0 (None)"));
    }
  });
  auto xid = with_id(run_diagnose(h, samples), "xid-error");
  ASSERT_EQ(xid.size(), 2u);
  EXPECT_EQ(xid[0].gpus, std::vector<int>{0});  // critical sorts first
  EXPECT_EQ(xid[0].severity, "critical");
  EXPECT_EQ(xid[1].severity, "info");
}

TEST(XidError, NoXidEventsNoFinding) {
  auto h = make_header(1);
  Jitter j;
  auto samples = make_samples(
      20, 1.0, [&](size_t, Sample& s) { s.gpus.push_back(busy_gpu(0, j)); });
  EXPECT_TRUE(with_id(run_diagnose(h, samples), "xid-error").empty());
}

}  // namespace
}  // namespace gd::test
