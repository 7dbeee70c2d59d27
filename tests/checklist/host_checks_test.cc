// swappiness, transparent-hugepages, cpu-governor.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checklist_fixture.h"

namespace gd::test {
namespace {

using ::testing::HasSubstr;

using HostChecks = HealthyGpusTest;

TEST_F(HostChecks, SwappinessPassesLowAndWarnsOnKernelDefault) {
  ChecklistTree good("healthy"), bad("misconfigured");
  CheckContext ok(h, s, good.proc(), good.sys());
  auto items = run_check(ok, "swappiness");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].status, CheckStatus::kPass);
  EXPECT_EQ(items[0].value, "vm.swappiness = 10");

  CheckContext warn(h, s, bad.proc(), bad.sys());
  items = run_check(warn, "swappiness");
  EXPECT_EQ(items[0].status, CheckStatus::kWarn);
  EXPECT_EQ(items[0].value, "vm.swappiness = 60");
  EXPECT_THAT(items[0].detail, HasSubstr("sysctl -w vm.swappiness=10"));
}

TEST_F(HostChecks, SwappinessDoesNotMatterWithoutSwap) {
  ChecklistTree bad("misconfigured");
  h.host.swap_total_bytes = 0;
  CheckContext ctx(h, s, bad.proc(), bad.sys());
  auto items = run_check(ctx, "swappiness");
  EXPECT_EQ(items[0].status, CheckStatus::kPass);
  EXPECT_EQ(items[0].value, "vm.swappiness = 60, no swap");
}

TEST_F(HostChecks, SwappinessSkipsWhenUnreadable) {
  ChecklistTree tree("healthy");
  tree.remove("proc/sys");
  CheckContext ctx(h, s, tree.proc(), tree.sys());
  EXPECT_EQ(run_check(ctx, "swappiness")[0].status, CheckStatus::kSkip);
}

TEST_F(HostChecks, TransparentHugepagesWarnsOnlyOnSynchronousDefrag) {
  ChecklistTree good("healthy"), bad("misconfigured");
  CheckContext ok(h, s, good.proc(), good.sys());
  auto items = run_check(ok, "transparent-hugepages");
  EXPECT_EQ(items[0].status, CheckStatus::kPass);
  EXPECT_EQ(items[0].value, "enabled=madvise defrag=madvise");

  CheckContext warn(h, s, bad.proc(), bad.sys());
  items = run_check(warn, "transparent-hugepages");
  EXPECT_EQ(items[0].status, CheckStatus::kWarn);
  EXPECT_EQ(items[0].value, "enabled=always defrag=always");

  bad.write("sys/kernel/mm/transparent_hugepage/enabled",
            "always madvise [never]\n");
  EXPECT_EQ(run_check(warn, "transparent-hugepages")[0].status,
            CheckStatus::kPass);
}

TEST_F(HostChecks, CpuGovernorCountsCpusPerGovernor) {
  ChecklistTree good("healthy"), bad("misconfigured");
  CheckContext ok(h, s, good.proc(), good.sys());
  auto items = run_check(ok, "cpu-governor");
  EXPECT_EQ(items[0].status, CheckStatus::kPass);
  EXPECT_EQ(items[0].value, "performance (8 CPUs)");

  bad.write("sys/devices/system/cpu/cpu7/cpufreq/scaling_governor",
            "performance\n");
  CheckContext warn(h, s, bad.proc(), bad.sys());
  items = run_check(warn, "cpu-governor");
  EXPECT_EQ(items[0].status, CheckStatus::kWarn);
  EXPECT_EQ(items[0].value, "performance (1 CPU), powersave (7 CPUs)");
  EXPECT_THAT(items[0].detail,
              HasSubstr("cpupower frequency-set -g performance"));
}

TEST_F(HostChecks, CpuGovernorSkipsWithoutCpufreq) {
  ChecklistTree tree("healthy");
  for (int c = 0; c < 8; ++c)
    tree.remove("sys/devices/system/cpu/cpu" + std::to_string(c) + "/cpufreq");
  CheckContext ctx(h, s, tree.proc(), tree.sys());
  auto items = run_check(ctx, "cpu-governor");
  EXPECT_EQ(items[0].status, CheckStatus::kSkip);
  EXPECT_THAT(items[0].detail, HasSubstr("no cpufreq"));
}

}  // namespace
}  // namespace gd::test
