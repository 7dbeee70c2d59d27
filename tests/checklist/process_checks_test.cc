// memlock-limit, open-files-limit, numa-placement, dev-shm.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/statvfs.h>

#include "checklist_fixture.h"
#include "views/format.h"

namespace gd::test {
namespace {

using ::testing::HasSubstr;

using ProcessChecks = HealthyGpusTest;

TEST_F(ProcessChecks, MemlockUnlimitedPassesAndLowWarnsWithRdma) {
  ChecklistTree good("healthy"), bad("misconfigured");
  CheckContext ok(h, s, good.proc(), good.sys());
  auto items = run_check(ok, "memlock-limit");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].status, CheckStatus::kPass);
  EXPECT_EQ(items[0].value, "python (pid 4242): unlimited");

  CheckContext warn(h, s, bad.proc(), bad.sys());
  items = run_check(warn, "memlock-limit");
  EXPECT_EQ(items[0].status, CheckStatus::kWarn);
  EXPECT_EQ(items[0].value, "python (pid 4242): 64.0 KiB");
  EXPECT_THAT(items[0].detail, HasSubstr("memlock=-1"));

  bad.remove("sys/class/infiniband");  // no RDMA: the limit does not matter
  items = run_check(warn, "memlock-limit");
  EXPECT_EQ(items[0].status, CheckStatus::kPass);
  EXPECT_THAT(items[0].detail, HasSubstr("no RDMA devices"));
}

TEST_F(ProcessChecks, OpenFilesWarnsBelowTheRecommendation) {
  ChecklistTree good("healthy"), bad("misconfigured");
  CheckContext ok(h, s, good.proc(), good.sys());
  auto items = run_check(ok, "open-files-limit");
  EXPECT_EQ(items[0].status, CheckStatus::kPass);
  EXPECT_EQ(items[0].value, "python (pid 4242): 1048576 (hard 1048576)");

  CheckContext warn(h, s, bad.proc(), bad.sys());
  items = run_check(warn, "open-files-limit");
  EXPECT_EQ(items[0].status, CheckStatus::kWarn);
  EXPECT_EQ(items[0].value, "python (pid 4242): 1024 (hard 4096)");
  // The hard limit is too low too: ulimit -n alone cannot fix it.
  EXPECT_THAT(items[0].detail, HasSubstr("raise the hard limit"));
}

TEST_F(ProcessChecks, LimitsOfAVanishedProcessAreSkipped) {
  ChecklistTree good("healthy");
  s.gpus[1].processes->push_back({777, 1ull << 30, "compute"});
  CheckContext ctx(h, s, good.proc(), good.sys());
  auto items = run_check(ctx, "open-files-limit");
  ASSERT_EQ(items.size(), 2u);  // in pid order
  EXPECT_EQ(items[0].status, CheckStatus::kSkip);
  EXPECT_EQ(items[0].value, "pid 777: -");
  EXPECT_EQ(items[1].status, CheckStatus::kPass);
}

TEST_F(ProcessChecks, NumaPlacementLocalPassesRemoteWarns) {
  ChecklistTree good("healthy"), bad("misconfigured");
  CheckContext ok(h, s, good.proc(), good.sys());
  auto items = run_check(ok, "numa-placement");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].status, CheckStatus::kPass);
  EXPECT_EQ(items[0].value,
            "python (pid 4242): GPU 0 on node 0; cpus 0-3, mems 0");

  CheckContext warn(h, s, bad.proc(), bad.sys());
  items = run_check(warn, "numa-placement");
  EXPECT_EQ(items[0].status, CheckStatus::kWarn);
  EXPECT_EQ(items[0].value,
            "python (pid 4242): GPU 0 on node 0; cpus 4-7, mems 1");
  EXPECT_THAT(items[0].detail,
              HasSubstr("numactl --cpunodebind=0 --membind=0"));
}

TEST_F(ProcessChecks, NumaNodeOfSysfsWinsOverHeader) {
  ChecklistTree bad("misconfigured");
  bad.add_gpus_on_root_ports();
  bad.write("sys/devices/pci0000:00/0000:00:01.0/0000:07:00.0/numa_node",
            "1\n");
  CheckContext ctx(h, s, bad.proc(), bad.sys());  // header says node 0
  auto items = run_check(ctx, "numa-placement");
  EXPECT_EQ(items[0].status, CheckStatus::kPass);
  EXPECT_THAT(items[0].value, HasSubstr("GPU 0 on node 1"));
}

TEST_F(ProcessChecks, NumaUnpinnedPassesWithNoteAndOneNodeIsLocal) {
  ChecklistTree tree("healthy");
  tree.write("proc/4242/status",
             "Name:\tpython\nPid:\t4242\nCpus_allowed_list:\t0-7\n"
             "Mems_allowed_list:\t0-1\n");
  CheckContext ctx(h, s, tree.proc(), tree.sys());
  auto items = run_check(ctx, "numa-placement");
  EXPECT_EQ(items[0].status, CheckStatus::kPass);
  EXPECT_THAT(items[0].value, HasSubstr("(not pinned)"));
  EXPECT_THAT(items[0].detail, HasSubstr("numactl"));

  tree.remove("sys/devices/system/node/node1");
  items = run_check(ctx, "numa-placement");
  EXPECT_EQ(items[0].value, "one NUMA node");
}

TEST_F(ProcessChecks, DevShmWarnsWhenSmallAndWorkersUseIt) {
  ChecklistTree tree("healthy");
  CheckContext ctx(h, s, tree.proc(), tree.sys());
  std::string asked;
  ctx.fs_size_bytes = [&](const std::string& path) -> std::optional<uint64_t> {
    asked = path;
    return 64ull << 20;  // Docker's default
  };
  auto items = run_check(ctx, "dev-shm");
  EXPECT_EQ(asked, tree.proc() + "/4242/root/dev/shm");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].status, CheckStatus::kWarn);
  EXPECT_EQ(items[0].value, "python (pid 4242): 64.0 MiB, 1 worker");
  EXPECT_THAT(items[0].detail, HasSubstr("--shm-size"));

  s.processes.pop_back();  // no worker: small is fine
  items = run_check(ctx, "dev-shm");
  EXPECT_EQ(items[0].status, CheckStatus::kPass);
  EXPECT_EQ(items[0].value, "python (pid 4242): 64.0 MiB, 0 workers");
}

TEST_F(ProcessChecks, DevShmReadsTheProcessViewAndSkipsWhenUnreadable) {
  ChecklistTree tree("healthy");
  CheckContext ctx(h, s, tree.proc(), tree.sys());  // real statvfs
  auto items = run_check(ctx, "dev-shm");
  // The fixture's dev/shm lies on the test machine's temp filesystem.
  struct statvfs st {};
  ASSERT_EQ(statvfs((tree.proc() + "/4242/root/dev/shm").c_str(), &st), 0);
  uint64_t size = static_cast<uint64_t>(st.f_blocks) * st.f_frsize;
  EXPECT_EQ(items[0].value,
            "python (pid 4242): " + human_bytes(size) + ", 1 worker");
  EXPECT_EQ(items[0].status,
            size >= (1ull << 30) ? CheckStatus::kPass : CheckStatus::kWarn);

  tree.remove("proc/4242/root");
  items = run_check(ctx, "dev-shm");
  EXPECT_EQ(items[0].status, CheckStatus::kSkip);
  EXPECT_THAT(items[0].detail, HasSubstr("mount namespace"));
}

TEST_F(ProcessChecks, ProcessChecksSkipWithoutGpuProcesses) {
  ChecklistTree tree("healthy");
  s.gpus[0].processes->clear();
  CheckContext ctx(h, s, tree.proc(), tree.sys());
  for (auto* id :
       {"memlock-limit", "open-files-limit", "numa-placement", "dev-shm"}) {
    auto items = run_check(ctx, id);
    ASSERT_EQ(items.size(), 1u) << id;
    EXPECT_EQ(items[0].status, CheckStatus::kSkip) << id;
    EXPECT_EQ(items[0].detail, "no GPU processes") << id;
  }
}

}  // namespace
}  // namespace gd::test
