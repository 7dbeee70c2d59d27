// recovery-action-required: NVML's recovery action, tied to the Xid 154 line
// that announced it; silent on none, unknown, or an action cleared by reset.
#include <gtest/gtest.h>

#include "scenario_builder.h"
#include "text_contains.h"

namespace gd::test {
namespace {

const char* kXid154 =
    "NVRM: Xid (PCI:0000:07:00): 154, GPU recovery action changed from 0x0 "
    "(None) to 0x1 (GPU Reset Required)";

// 2 GPUs for 120 s; GPU 1 reports `action(i)`, GPU 0 reports none.
DiagnoseResult run_actions(const std::function<std::string(size_t)>& action,
                           bool xid154 = false) {
  auto h = make_header(2);
  Jitter j;
  return run_diagnose(h, make_samples(120, 1.0, [&](size_t i, Sample& s) {
                        GpuSample g0 = busy_gpu(0, j), g1 = busy_gpu(1, j);
                        g0.recovery_action = kRecoveryNone;
                        g1.recovery_action = action(i);
                        s.gpus = {g0, g1};
                        if (xid154 && i == 60)
                          s.events.push_back(xid_event(1, 154, kXid154));
                      }));
}

struct Expected {
  const char* value;
  const char* title;
  const char* action;
};

TEST(RecoveryActionRequired, EachActionIsCriticalAndTheFixFollowsIt) {
  const Expected cases[] = {
      {kRecoveryGpuReset, "GPU Reset Required", "nvidia-smi -r -i 1"},
      {kRecoveryNodeReboot, "Node Reboot Required", "Reboot the node"},
      {kRecoveryDrainP2p, "Drain P2P", "stop the multi-GPU jobs"},
      {kRecoveryDrainAndReset, "Drain and Reset", "Drain the GPU and reset"},
  };
  for (const Expected& c : cases) {
    SCOPED_TRACE(c.value);
    auto r = run_actions([&](size_t i) {
      return std::string(i < 60 ? kRecoveryNone : c.value);
    });
    auto f = with_id(r, "recovery-action-required");
    ASSERT_EQ(f.size(), 1u);
    EXPECT_EQ(f[0].severity, "critical");
    EXPECT_EQ(f[0].gpus, std::vector<int>{1});
    EXPECT_TRUE(contains(f[0].title, c.title)) << f[0].title;
    EXPECT_TRUE(contains(f[0].action, c.action)) << f[0].action;
    EXPECT_TRUE(contains(f[0].evidence, std::string("recovery action ") +
                                            c.value + " in 60 samples"))
        << f[0].evidence;
    EXPECT_DOUBLE_EQ(f[0].start, kT0 + 60);
  }
}

TEST(RecoveryActionRequired, EvidenceNamesTheXid154Line) {
  auto r = run_actions(
      [](size_t i) { return std::string(i < 60 ? "none" : "gpu_reset"); },
      true);
  auto f = with_id(r, "recovery-action-required");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_TRUE(contains(f[0].evidence, "Xid 154")) << f[0].evidence;
  EXPECT_TRUE(contains(f[0].evidence, "to 0x1 (GPU Reset Required)"))
      << f[0].evidence;
}

TEST(RecoveryActionRequired, NoneUnknownOrClearedStaysSilent) {
  EXPECT_TRUE(with_id(run_actions([](size_t) { return std::string("none"); }),
                      "recovery-action-required")
                  .empty());
  EXPECT_TRUE(with_id(run_actions([](size_t) { return std::string(); }),
                      "recovery-action-required")
                  .empty());
  // Reset at 90 s: the requirement was met inside the window.
  EXPECT_TRUE(with_id(run_actions([](size_t i) {
                        return std::string(i >= 30 && i < 90 ? "gpu_reset"
                                                             : "none");
                      }),
                      "recovery-action-required")
                  .empty());
}

}  // namespace
}  // namespace gd::test
