// check's hardware verdicts on one sample: each spoilt fact alone.
#include <gtest/gtest.h>

#include "check_fixture.h"

namespace gd::check::test {
namespace {

using V = std::vector<std::string>;

TEST(Check, HealthyHostHasNoFindingAndExits0) {
  Host h;
  Result r = h.judge();
  EXPECT_EQ(ids(r), V{});
  EXPECT_TRUE(r.healthy());
  EXPECT_EQ(r.exit_code(), kExitHealthy);
  EXPECT_EQ(r.gpus, (std::vector<int>{0, 1, 2, 3}));
}

TEST(Check, LostGpuIsUnhealthyOnOneSample) {
  Host h;
  h.gpu(2) = GpuSample{};
  h.gpu(2).index = 2;
  h.gpu(2).lost = true;
  Result r = h.judge();
  EXPECT_EQ(ids(r), V{"gpu-lost@2:critical"});
  EXPECT_EQ(r.exit_code(), kExitUnhealthy);
}

TEST(Check, StaleGpuDidNotAnswerWithinTheDeadline) {
  Host h;
  h.gpu(1) = GpuSample{};
  h.gpu(1).index = 1;
  h.gpu(1).stale = true;
  Result r = h.judge();
  ASSERT_EQ(ids(r), V{"gpu-unresponsive@1:critical"});
  EXPECT_EQ(r.findings[0].brief, "did not answer within 1s");
}

TEST(Check, Xid79IsCriticalAndAnApplicationXidAWarning) {
  Host h;
  h.sample.events.push_back(
      event("xid", 3, 79,
            "NVRM: Xid (PCI:0000:13:00): 79, GPU has fallen off the bus."));
  Result r = h.judge();
  EXPECT_EQ(ids(r), (V{"gpu-lost@3:critical", "xid-error@3:critical"}));
  EXPECT_EQ(r.findings[0].brief, "Xid 79 (it fell off the bus)");
  EXPECT_EQ(r.findings[1].brief, "Xid 79 (it fell off the bus)");

  Host a;
  a.sample.events.push_back(
      event("xid", 0, 13, "NVRM: Xid (PCI:0000:10:00): 13, Graphics"));
  EXPECT_EQ(ids(a.judge()), V{"xid-error@0:warning"});
  EXPECT_EQ(a.judge().exit_code(), kExitWarnings);
}

TEST(Check, UncorrectableVolatileEccPendingRemapAndRecoveryAction) {
  Host h;
  h.gpu(0).ecc_dbe_volatile_total = 2;
  h.gpu(1).remapped_rows_pending = true;
  h.gpu(2).recovery_action = kRecoveryGpuReset;
  h.gpu(3).retired_pages_pending = true;
  Result r = h.judge();
  EXPECT_EQ(
      ids(r),
      (V{"ecc-uncorrectable@0:critical", "ecc-reset-required@1:critical",
         "recovery-action-required@2:critical", "ecc-reset-required@3:critical",
         "ecc-uncorrectable@3:critical"}));
  EXPECT_EQ(r.findings[2].brief, "recovery action gpu_reset");
}

TEST(Check, OnlyABankWithoutSpareRowsStopsAJob) {
  Host h;
  RowRemapHistogram low, none;
  low.max = none.max = 600;
  low.low = 2;
  none.none = 1;
  h.gpu(0).row_remap_histogram = low;
  h.gpu(1).row_remap_histogram = none;
  EXPECT_EQ(ids(h.judge()), V{"memory-degrading@1:critical"});
}

TEST(Check, NvlinkDownWhileOthersAreUpButNotWhenTheHostHasNone) {
  Host h;
  for (int i = 0; i < 2; ++i) {
    h.gpu(i).nvlinks.emplace();
    for (int l = 0; l < 4; ++l)
      h.gpu(i).nvlinks->push_back(NvLink{l, true, {}, {}, {}, {}});
  }
  (*h.gpu(1).nvlinks)[2].active = false;
  EXPECT_EQ(ids(h.judge()), V{"nvlink-degraded@1:critical"});
  for (int i = 0; i < 2; ++i)
    for (auto& l : *h.gpu(i).nvlinks) l.active = false;
  EXPECT_EQ(ids(h.judge()), V{});
}

TEST(Check, FabricNotCompletedAndFatalSxid) {
  Host h;
  h.gpu(0).fabric_state = kFabricFailed;
  h.gpu(1).fabric_state = kFabricInProgress;
  h.gpu(2).fabric_state = kFabricCompleted;
  h.gpu(3).fabric_state = kFabricNotSupported;
  h.sample.events.push_back(
      event(kEventSxid, std::nullopt, 12028,
            "nvidia-nvswitch2: SXid (PCI:0000:07:00.0): 12028, Non-fatal, "
            "Link 62"));
  h.sample.events.push_back(
      event(kEventSxid, std::nullopt, 24007,
            "nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 24007, Fatal, "
            "Link 44"));
  EXPECT_EQ(ids(h.judge()),
            (V{"sxid-error@host:critical", "fabric-manager-down@0:critical",
               "fabric-manager-down@1:warning"}));
}

TEST(Check, KernelLogNotReadIsNotJudgedNotHealthy) {
  Host h;
  h.header.kernel_log_error = "not read (--kmsg none)";
  Result r = h.judge();
  EXPECT_EQ(r.exit_code(), kExitHealthy);
  std::vector<std::string> not_judged;
  for (const auto& n : r.not_judged) not_judged.push_back(n.id);
  EXPECT_NE(std::find(not_judged.begin(), not_judged.end(), "xid-error"),
            not_judged.end());
  EXPECT_NE(std::find(not_judged.begin(), not_judged.end(), "sxid-error"),
            not_judged.end());
}

TEST(Check, DriverMismatchAndAGpuThePciBusHasButNvmlLacks) {
  Host h;
  h.header.pci_gpus->push_back({"0000:20:00.0", std::string("nvidia")});
  EXPECT_EQ(ids(h.judge()), V{"gpu-missing@host:critical"});
  Host m(0);
  m.header.nvml_status = kNvmlDriverMismatch;
  m.header.driver->kernel_module_version = "550.54.15";
  m.header.driver->library_version = "555.42.02";
  EXPECT_EQ(ids(m.judge()), V{"nvml-driver-mismatch@host:critical"});
}

TEST(Check, WarningsPersistenceHotIdleClocksHeldEccOff) {
  Host h;
  h.header.gpus[0].persistence_mode = false;
  h.gpu(1).temp_c = 80;
  h.gpu(2).clock_event_reasons =
      std::vector<std::string>{"gpu_idle", "hw_power_brake_slowdown"};
  h.header.gpus[3].ecc_enabled = false;
  Result r = h.judge();
  EXPECT_EQ(ids(r),
            (V{"persistence-mode-off@0:warning", "gpu-hot-at-idle@1:warning",
               "clocks-held-at-idle@2:warning", "ecc-off@3:warning"}));
  EXPECT_EQ(r.exit_code(), kExitWarnings);
  // Busy, the same heat and brake are not an idle GPU's.
  Host b;
  b.gpu(1).temp_c = 80;
  b.gpu(1).util_pct = 90;
  b.gpu(2).util_pct = 90;
  b.gpu(2).clock_event_reasons =
      std::vector<std::string>{"hw_power_brake_slowdown"};
  EXPECT_EQ(ids(b.judge()), V{});
}

}  // namespace
}  // namespace gd::check::test
