// xid-error severities that depend on more than the code: Xid 63 after
// correctable errors only (a pending remap), Xid 154's announced recovery
// action, Xid 119/120 on several GPUs of one host (the driver / GSP firmware).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "diagnose/xid_recovery_action.h"
#include "kernellog/kernel_log.h"
#include "scenario_builder.h"
#include "text_contains.h"

namespace gd::test {
namespace {

std::string xid_line(int gpu, int code, const std::string& what) {
  return "NVRM: Xid (PCI:0000:0" + std::to_string(gpu + 7) +
         ":00): " + std::to_string(code) + ", " + what;
}

// 120 s of two busy GPUs; `at_60` adds what happens on GPU 0 half-way.
DiagnoseResult run_gpus(int n_gpus, const std::function<void(Sample&)>& at_60,
                        const std::function<void(GpuSample&)>& gpu0 = {}) {
  Jitter j;
  auto samples = make_samples(120, 1.0, [&](size_t i, Sample& s) {
    for (int g = 0; g < n_gpus; ++g) s.gpus.push_back(busy_gpu(g, j));
    if (i >= 60 && gpu0) gpu0(s.gpus[0]);
    if (i == 60) at_60(s);
  });
  return run_diagnose(make_header(n_gpus), samples);
}

const std::string kRemapLine = xid_line(
    0, 63,
    "pid=1896, Row Remapper: New row marked for remapping, reset gpu to "
    "activate.");

TEST(XidContext, RowRemapAfterCorrectableErrorsOnlyIsAPendingRemapWarning) {
  auto r = run_gpus(
      2, [](Sample& s) { s.events.push_back(xid_event(0, 63, kRemapLine)); },
      [](GpuSample& g) {
        g.ecc_sbe_volatile_total = 12;
        g.remapped_rows_pending = true;
      });
  auto xid = with_id(r, "xid-error");
  ASSERT_EQ(xid.size(), 1u);
  EXPECT_EQ(xid[0].severity, "warning");
  EXPECT_TRUE(contains(xid[0].title, "pending remap")) << xid[0].title;
  EXPECT_TRUE(contains(xid[0].action,
                       "Reset the GPU (or reboot) to apply the "
                       "remap, when it is drained"))
      << xid[0].action;
  EXPECT_TRUE(contains(xid[0].action, "nvidia-smi -r -i 0")) << xid[0].action;
}

TEST(XidContext, RowRemapWithUncorrectableErrorsStaysCritical) {
  // Counted by NVML ...
  auto r = run_gpus(
      2, [](Sample& s) { s.events.push_back(xid_event(0, 63, kRemapLine)); },
      [](GpuSample& g) { g.ecc_dbe_volatile_total = 1; });
  auto xid = with_id(r, "xid-error");
  ASSERT_EQ(xid.size(), 1u);
  EXPECT_EQ(xid[0].severity, "critical");
  EXPECT_FALSE(contains(xid[0].title, "pending remap")) << xid[0].title;
  // ... or announced by Xid 48 on the same GPU (before or after the 63).
  r = run_gpus(2, [](Sample& s) {
    s.events.push_back(xid_event(0, 63, kRemapLine));
    s.events.push_back(xid_event(
        0, 48, xid_line(0, 48, "pid=0, An uncorrectable double bit error")));
  });
  auto remap = with_id(r, "xid-error");
  ASSERT_EQ(remap.size(), 2u);
  for (const auto& f : remap) EXPECT_EQ(f.severity, "critical") << f.title;
}

TEST(XidContext, RowRemapWithARemapFailureStaysCritical) {
  auto r = run_gpus(
      2, [](Sample& s) { s.events.push_back(xid_event(0, 63, kRemapLine)); },
      [](GpuSample& g) { g.remapped_rows_failure = true; });
  auto xid = with_id(r, "xid-error");
  ASSERT_EQ(xid.size(), 1u);
  EXPECT_EQ(xid[0].severity, "critical");
  // Another GPU's uncorrectable errors do not make GPU 1's remap critical.
  r = run_gpus(2, [](Sample& s) {
    s.events.push_back(xid_event(1, 63, xid_line(1, 63, "Row Remapper")));
    s.events.push_back(xid_event(
        0, 48, xid_line(0, 48, "pid=0, An uncorrectable double bit error")));
  });
  for (const auto& f : with_id(r, "xid-error"))
    EXPECT_EQ(f.severity,
              f.gpus == std::vector<int>{1} ? "warning" : "critical")
        << f.title;
}

TEST(XidContext, ParsesTheRecoveryActionAnXid154Announces) {
  auto change = parse_recovery_action_change(
      "NVRM: Xid (PCI:0000:17:00): 154, GPU recovery action changed from 0x0 "
      "(None) to 0x1 (GPU Reset Required)");
  ASSERT_TRUE(change.has_value());
  EXPECT_EQ(change->from, RecoveryAction::none);
  EXPECT_EQ(change->to, RecoveryAction::gpu_reset);
  change = parse_recovery_action_change(
      "154, GPU recovery action changed from 0x1 (GPU Reset Required) to 0x2 "
      "(Node Reboot Required)");
  ASSERT_TRUE(change.has_value());
  EXPECT_EQ(change->from, RecoveryAction::gpu_reset);
  EXPECT_EQ(change->to, RecoveryAction::node_reboot);
  EXPECT_EQ(parse_recovery_action_change(
                "154, GPU recovery action changed from 0x0 (None) to 0x3 "
                "(Drain P2P)")
                ->to,
            RecoveryAction::drain_p2p);
  EXPECT_EQ(parse_recovery_action_change(
                "154, GPU recovery action changed from 0x0 (None) to 0x4 "
                "(Drain and Reset)")
                ->to,
            RecoveryAction::drain_and_reset);
  EXPECT_FALSE(parse_recovery_action_change("154, something else"));
  EXPECT_FALSE(parse_recovery_action_change(
      "154, GPU recovery action changed from 0x0 (None) to 0x9 (Future)"));
}

// The real Xid 154 lines of the contracts (GD_SHARED_DIR/real/xid_lines.txt,
// lines 1-47 are Xid lines), through the kernel-log parser as `record` reads
// them, then into a finding that names the action.
TEST(XidContext, RealXid154LinesNameTheirRecoveryAction) {
  const std::string path = std::string(GD_SHARED_DIR) + "/real/xid_lines.txt";
  ASSERT_TRUE(std::filesystem::exists(path)) << path << " is absent";
  std::ifstream in(path);
  PciIndex pci;
  int seen = 0, n = 0;
  for (std::string line; n < 47 && std::getline(in, line); ++n) {
    auto event = parse_kernel_log_line(line, pci);
    if (!event || event->code != 154) continue;
    ++seen;
    auto change = parse_recovery_action_change(event->text);
    ASSERT_TRUE(change.has_value()) << line;
    EXPECT_EQ(change->to, RecoveryAction::gpu_reset) << line;
    event->gpu = 0;
    auto samples = make_samples(2, 1.0, [&](size_t i, Sample& s) {
      if (i == 1) s.events.push_back(*event);
    });
    auto xid = with_id(run_diagnose(make_header(1), samples), "xid-error");
    ASSERT_EQ(xid.size(), 1u);
    EXPECT_TRUE(contains(xid[0].title, "GPU Reset Required")) << xid[0].title;
    EXPECT_TRUE(contains(xid[0].action, "nvidia-smi -r -i 0")) << xid[0].action;
  }
  EXPECT_GE(seen, 1) << "no Xid 154 line in " << path;
}

struct Announced {
  const char* value;
  const char* label;
  const char* severity;
  const char* fix;  // part of the action the finding must give
};

TEST(XidContext, Xid154FindingNamesTheActionAndItsSeverityFollowsIt) {
  const Announced cases[] = {
      {"0x1", "GPU Reset Required", "critical", "nvidia-smi -r -i 0"},
      {"0x2", "Node Reboot Required", "critical", "Reboot the node"},
      {"0x3", "Drain P2P", "critical", "Drain peer-to-peer traffic"},
      {"0x4", "Drain and Reset", "critical", "Drain the GPU and reset it"},
      {"0x0", "None", "info", "No recovery action is required"},
  };
  for (const auto& c : cases) {
    std::string line = xid_line(
        0, 154,
        std::string("GPU recovery action changed from 0x0 (None) to ") +
            c.value + " (" + c.label + ")");
    auto r = run_gpus(
        2, [&](Sample& s) { s.events.push_back(xid_event(0, 154, line)); });
    auto xid = with_id(r, "xid-error");
    ASSERT_EQ(xid.size(), 1u) << c.label;
    EXPECT_EQ(xid[0].severity, c.severity) << c.label;
    EXPECT_TRUE(contains(xid[0].title, c.label)) << xid[0].title;
    EXPECT_TRUE(contains(xid[0].action, c.fix)) << xid[0].action;
  }
}

TEST(XidContext, Xid154SeverityFollowsTheLastAnnouncedAction) {
  Jitter j;
  auto samples = make_samples(120, 1.0, [&](size_t i, Sample& s) {
    s.gpus.push_back(busy_gpu(0, j));
    if (i == 30)
      s.events.push_back(xid_event(
          0, 154,
          xid_line(0, 154,
                   "GPU recovery action changed from 0x0 (None) to 0x1 (GPU "
                   "Reset Required)")));
    if (i == 90)
      s.events.push_back(xid_event(
          0, 154,
          xid_line(0, 154,
                   "GPU recovery action changed from 0x1 (GPU Reset Required) "
                   "to 0x2 (Node Reboot Required)")));
  });
  auto xid = with_id(run_diagnose(make_header(1), samples), "xid-error");
  ASSERT_EQ(xid.size(), 1u);
  EXPECT_EQ(xid[0].severity, "critical");
  EXPECT_TRUE(contains(xid[0].title, "Node Reboot Required")) << xid[0].title;
  EXPECT_TRUE(contains(xid[0].action, "Reboot the node")) << xid[0].action;
  EXPECT_TRUE(contains(xid[0].evidence, "changed from GPU Reset Required"))
      << xid[0].evidence;
}

const std::string kGspTimeout =
    "pid=4071838, name=python, Timeout after 45s of waiting for RPC response "
    "from GPU4 GSP! Expected function 76 (GSP_RM_CONTROL) (0x20801702 0x4).";

TEST(XidContext, GspXidsOnSeveralGpusPointAtTheDriver) {
  auto r = run_gpus(4, [](Sample& s) {
    s.events.push_back(xid_event(0, 119, xid_line(0, 119, kGspTimeout)));
    s.events.push_back(xid_event(2, 119, xid_line(2, 119, kGspTimeout)));
    s.events.push_back(xid_event(
        3, 120, xid_line(3, 120, "GSP kernel exception: store access fault")));
  });
  auto xid = with_id(r, "xid-error");
  ASSERT_EQ(xid.size(), 3u);
  for (const auto& f : xid) {
    EXPECT_EQ(f.severity, "critical") << f.title;
    EXPECT_TRUE(contains(f.action,
                         "Several GPUs, one driver: update the driver "
                         "(or disable GSP firmware"))
        << f.action;
    EXPECT_TRUE(contains(f.evidence, "3 GPUs")) << f.evidence;
    EXPECT_TRUE(contains(f.evidence, "535.129.03")) << f.evidence;
    EXPECT_TRUE(contains(f.title, "driver / GSP firmware")) << f.title;
  }
}

TEST(XidContext, GspXidOnOneGpuStaysAsBefore) {
  auto r = run_gpus(4, [](Sample& s) {
    s.events.push_back(xid_event(0, 119, xid_line(0, 119, kGspTimeout)));
    s.events.push_back(xid_event(0, 120, xid_line(0, 120, "GSP error")));
  });
  auto xid = with_id(r, "xid-error");
  ASSERT_EQ(xid.size(), 2u);
  for (const auto& f : xid) {
    EXPECT_EQ(f.severity, "critical");
    EXPECT_FALSE(contains(f.action, "Several GPUs")) << f.action;
    EXPECT_TRUE(contains(f.action, "Reset the GPU")) << f.action;
  }
}

}  // namespace
}  // namespace gd::test
