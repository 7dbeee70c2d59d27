// kill's plan when NVML lists a PID 1 (a container whose workload is its
// PID 1, or gpudoctor run inside such a container), and --user with --tree.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "procmgmt/kill_plan.h"

namespace gd::procmgmt {
namespace {

using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

ProcEntry proc(uint32_t pid, uint32_t ppid, std::string cmdline, uint32_t uid,
               std::vector<uint32_t> nspid = {}) {
  ProcEntry e;
  e.pid = pid;
  e.ppid = ppid;
  e.state = 'S';
  e.uid = uid;
  e.user = uid == 0 ? "root" : "u" + std::to_string(uid);
  e.comm = cmdline.substr(0, cmdline.find(' '));
  e.cmdline = std::move(cmdline);
  e.nspid = nspid.empty() ? std::vector<uint32_t>{pid} : std::move(nspid);
  return e;
}

std::vector<uint32_t> pids(const std::vector<KillTarget>& ts) {
  std::vector<uint32_t> out;
  for (const auto& t : ts) out.push_back(t.proc.pid);
  return out;
}

// Seen from inside a container whose workload `python train.py` is PID 1:
// its two forked loader workers, plus a shell someone exec'd into the
// container and a sleep started from it (unrelated to the job).
ProcSnapshot container_seen_from_inside() {
  return ProcSnapshot::from_entries({
      proc(1, 0, "python train.py", 0),
      proc(20, 1, "python train.py", 0),
      proc(21, 1, "python train.py", 0),
      proc(30, 1, "bash", 0),
      proc(31, 30, "sleep 1000", 0),
      proc(40, 30, "gpudoctor kill", 0),
  });
}

TEST(KillPlanInit, Pid1GpuProcessDoesNotMakeEveryProcessItsWorker) {
  auto procs = container_seen_from_inside();
  KillContext ctx{40, 0, {{0, {1}}}};
  KillPlan p = plan_kill({.pids = {31}}, ctx, procs);
  ASSERT_EQ(p.refusals.size(), 1u);
  EXPECT_THAT(p.refusals[0].reason, HasSubstr("--any"));
  EXPECT_TRUE(p.targets.empty());
}

TEST(KillPlanInit, Pid1GpuProcessStillHasItsRealWorkers) {
  auto procs = container_seen_from_inside();
  KillContext ctx{40, 0, {{0, {1}}}};
  KillPlan p = plan_kill({.pids = {20}}, ctx, procs);
  EXPECT_TRUE(p.refusals.empty());
  ASSERT_EQ(pids(p.targets), std::vector<uint32_t>{20});
  EXPECT_EQ(p.targets[0].role, "worker of GPU process 1");
}

// Seen from the host: the container's PID 1 is host pid 5000 (NSpid 5000 1).
ProcSnapshot container_seen_from_host() {
  return ProcSnapshot::from_entries({
      proc(1, 0, "/sbin/init", 0),
      proc(4000, 1, "containerd-shim", 0),
      proc(5000, 4000, "python train.py", 1000, {5000, 1}),
      proc(5001, 5000, "python train.py", 1000, {5001, 7}),
      proc(5002, 5000, "sh -c sleep", 1000, {5002, 8}),
      proc(5003, 5002, "sleep 600", 1000, {5003, 9}),
      proc(6000, 1, "gpudoctor kill", 0),
  });
}

TEST(KillPlanInit, ContainerPid1GpuProcessCountsOnlyItsRealWorkers) {
  auto procs = container_seen_from_host();
  KillContext ctx{6000, 0, {{0, {5000}}}};
  EXPECT_THAT(plan_kill({.pids = {5003}}, ctx, procs).refusals[0].reason,
              HasSubstr("--any"));
  EXPECT_TRUE(plan_kill({.pids = {5001}}, ctx, procs).refusals.empty());
  KillPlan tree = plan_kill({.pids = {5000}, .tree = true}, ctx, procs);
  EXPECT_TRUE(tree.refusals.empty());
  EXPECT_THAT(pids(tree.targets), UnorderedElementsAre(5000u, 5001u));
}

TEST(KillPlanUser, UserFiltersWhatTreeAdds) {
  // torchrun (alice) -> rank 101 (alice) -> worker 111 (alice); a helper
  // 120 below the launcher belongs to bob.
  auto procs = ProcSnapshot::from_entries({
      proc(1, 0, "/sbin/init", 0),
      proc(100, 1, "torchrun train.py", 1001),
      proc(101, 100, "python train.py", 1001),
      proc(111, 101, "python train.py", 1001),
      proc(120, 100, "python helper.py", 1002),
      proc(6000, 1, "gpudoctor kill", 0),
  });
  KillContext ctx{6000, 0, {{0, {101}}}};
  KillPlan p =
      plan_kill({.pids = {111}, .user = "u1001", .tree = true}, ctx, procs);
  EXPECT_TRUE(p.refusals.empty());
  EXPECT_THAT(pids(p.targets), UnorderedElementsAre(100u, 101u, 111u));
  ASSERT_EQ(p.notes.size(), 1u);
  EXPECT_THAT(p.notes[0], HasSubstr("pid 120 belongs to u1002"));
  // By uid as well.
  KillPlan by_uid =
      plan_kill({.pids = {111}, .user = "1002", .tree = true}, ctx, procs);
  EXPECT_TRUE(by_uid.targets.empty());
}

}  // namespace
}  // namespace gd::procmgmt
