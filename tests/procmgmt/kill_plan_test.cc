#include "procmgmt/kill_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "fixture_proc.h"

namespace gd::procmgmt {
namespace {

using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

class KillPlanTest : public ::testing::Test {
 protected:
  KillPlanTest() : procs(ProcSnapshot::read(fx.proc())) {
    ctx.self_pid = 6000;  // gpudoctor, child of bash 900
    ctx.euid = 1000;
    ctx.gpu_pids = {{0, {1001, 2001, 3000, 9999}}, {1, {1002, 4001}}};
  }
  KillPlan plan(KillRequest r) const { return plan_kill(r, ctx, procs); }
  static std::vector<uint32_t> pids(const std::vector<KillTarget>& ts) {
    std::vector<uint32_t> out;
    for (const auto& t : ts) out.push_back(t.proc.pid);
    return out;
  }
  static std::string refusal(const KillPlan& p) {
    return p.refusals.empty() ? "" : p.refusals[0].reason;
  }
  test::FixtureProc fx;
  ProcSnapshot procs;
  KillContext ctx;
};

TEST_F(KillPlanTest, GpuProcessIsATarget) {
  auto p = plan({.pids = {1001}});
  EXPECT_TRUE(p.refusals.empty());
  ASSERT_EQ(pids(p.targets), std::vector<uint32_t>{1001});
  EXPECT_EQ(p.targets[0].role, "GPU process on GPU 0");
  EXPECT_EQ(p.targets[0].gpus, std::vector<int>{0});
}

TEST_F(KillPlanTest, WorkerOfAGpuProcessIsAllowed) {
  auto p = plan({.pids = {1012}});
  EXPECT_TRUE(p.refusals.empty());
  ASSERT_EQ(p.targets.size(), 1u);
  EXPECT_EQ(p.targets[0].role, "worker of GPU process 1001");
}

TEST_F(KillPlanTest, Pid1IsNeverSignalledEvenByRootWithAny) {
  ctx.euid = 0;
  auto p = plan({.pids = {1}, .any = true});
  EXPECT_TRUE(p.targets.empty());
  EXPECT_THAT(refusal(p), HasSubstr("PID 1"));
}

TEST_F(KillPlanTest, KernelThreadsAreNeverSignalled) {
  ctx.euid = 0;
  EXPECT_THAT(refusal(plan({.pids = {2}, .any = true})),
              HasSubstr("kernel thread"));
  EXPECT_THAT(refusal(plan({.pids = {50}, .any = true})),
              HasSubstr("kernel thread"));
}

TEST_F(KillPlanTest, SelfAndAncestorsAreNeverSignalled) {
  EXPECT_THAT(refusal(plan({.pids = {6000}, .any = true})),
              HasSubstr("gpudoctor itself"));
  EXPECT_THAT(refusal(plan({.pids = {900}, .any = true})),
              HasSubstr("ancestor of gpudoctor"));
}

TEST_F(KillPlanTest, UnrelatedProcessNeedsAny) {
  EXPECT_THAT(refusal(plan({.pids = {7000}})), HasSubstr("--any"));
  auto p = plan({.pids = {7000}, .any = true});
  EXPECT_TRUE(p.refusals.empty());
  EXPECT_EQ(pids(p.targets), std::vector<uint32_t>{7000});
}

TEST_F(KillPlanTest, OtherUsersNeedRoot) {
  EXPECT_THAT(refusal(plan({.pids = {4001}})), HasSubstr("only root"));
  ctx.euid = 0;
  EXPECT_TRUE(plan({.pids = {4001}}).refusals.empty());
}

TEST_F(KillPlanTest, OneRefusalStopsTheWholePlan) {
  // The caller sends nothing when refusals is not empty; the plan still says
  // what would have been sent so the user sees the whole picture.
  auto p = plan({.pids = {1001, 7000}});
  EXPECT_EQ(p.refusals.size(), 1u);
  EXPECT_EQ(p.refusals[0].pid, 7000u);
}

TEST_F(KillPlanTest, ZombiesAreNotSignalledButKept) {
  auto p = plan({.pids = {2001}});
  EXPECT_TRUE(p.targets.empty());
  EXPECT_EQ(pids(p.zombies), std::vector<uint32_t>{2001});
}

TEST_F(KillPlanTest, ParentOfAZombieGpuProcessMayBeEnded) {
  // 2000 never reaped 2001, which NVML still lists: ending 2000 frees it.
  auto p = plan({.pids = {2000}});
  EXPECT_TRUE(p.refusals.empty()) << refusal(p);
  ASSERT_EQ(p.targets.size(), 1u);
  EXPECT_EQ(p.targets[0].role, "parent of unreaped zombie 2001");
}

TEST_F(KillPlanTest, UnknownPidIsNotFound) {
  auto p = plan({.pids = {8888}});
  EXPECT_EQ(p.not_found, std::vector<uint32_t>{8888});
  EXPECT_TRUE(p.targets.empty());
}

TEST_F(KillPlanTest, GpuSelectionNotesMissingPids) {
  auto p = plan({.gpus = {0}});
  EXPECT_THAT(pids(p.targets), UnorderedElementsAre(1001u, 3000u));
  EXPECT_EQ(pids(p.zombies), std::vector<uint32_t>{2001});
  ASSERT_EQ(p.notes.size(), 1u);
  EXPECT_THAT(p.notes[0], HasSubstr("9999"));
}

// pid 5000 (uid 1001) still holds GPU 0's device files after the CUDA
// process that forked it (pid 9999, still listed) exited.
TEST_F(KillPlanTest, HolderOfOrphanedMemoryIsATargetInItsOwnRole) {
  ctx.orphan_holders = {{5000, {0}}};
  ctx.orphaned_pids = {{0, {9999}}};
  ctx.euid = 1001;
  auto p = plan({.pids = {5000}});
  EXPECT_TRUE(p.refusals.empty()) << refusal(p);
  ASSERT_EQ(pids(p.targets), std::vector<uint32_t>{5000});
  EXPECT_EQ(p.targets[0].role, "holds orphaned memory on GPU 0");
  // Without the orphan it is just an unrelated process.
  ctx.orphan_holders.clear();
  EXPECT_THAT(refusal(plan({.pids = {5000}})), HasSubstr("--any"));
}

TEST_F(KillPlanTest, GpuSelectionPlansTheHolderOfItsOrphanedMemory) {
  ctx.orphan_holders = {{5000, {0}}};
  ctx.euid = 0;
  auto p = plan({.gpus = {0}});
  EXPECT_THAT(pids(p.targets), UnorderedElementsAre(1001u, 3000u, 5000u));
  // Another GPU's selection leaves it alone, and so does another user's.
  EXPECT_THAT(pids(plan({.gpus = {1}}).targets),
              ::testing::Not(::testing::Contains(5000u)));
  // A list selects what each of its GPUs would, once.
  std::vector<uint32_t> each = pids(plan({.gpus = {0}}).targets);
  for (uint32_t pid : pids(plan({.gpus = {1}}).targets)) each.push_back(pid);
  ASSERT_GT(each.size(), 3u);
  EXPECT_THAT(pids(plan({.gpus = {1, 0}}).targets),
              ::testing::UnorderedElementsAreArray(each));
  EXPECT_THAT(pids(plan({.gpus = {0}, .user = "0"}).targets),
              ::testing::Not(::testing::Contains(5000u)));
}

TEST_F(KillPlanTest, AnotherUsersHolderIsRefusedWithoutRoot) {
  ctx.orphan_holders = {{5000, {0}}};
  auto p = plan({.pids = {5000}});  // euid 1000, holder is uid 1001
  EXPECT_TRUE(p.targets.empty());
  EXPECT_THAT(refusal(p), HasSubstr("only root"));
}

TEST_F(KillPlanTest, UserFilter) {
  ctx.euid = 0;
  auto p = plan({.gpus = {1}, .user = user_name_of(1000)});
  EXPECT_EQ(pids(p.targets), std::vector<uint32_t>{1002});
  EXPECT_THAT(plan({.gpus = {1}, .user = "0"}).targets[0].proc.pid, 4001u);
}

TEST_F(KillPlanTest, TreeTakesLauncherRanksAndWorkersOnly) {
  auto p = plan({.pids = {1011}, .tree = true});
  EXPECT_TRUE(p.refusals.empty()) << refusal(p);
  EXPECT_THAT(pids(p.targets),
              UnorderedElementsAre(1000u, 1001u, 1002u, 1011u, 1012u));
  EXPECT_EQ(p.targets[0].proc.pid, 1000u);  // the launcher first
  EXPECT_EQ(p.targets[0].role, "launcher of 1011");
}

TEST_F(KillPlanTest, TreeWithoutLauncherIsTheProcessAndItsDescendants) {
  ctx.gpu_pids[0].push_back(2000);
  auto p = plan({.pids = {2000}, .tree = true});
  EXPECT_TRUE(p.targets.size() == 1 && p.targets[0].proc.pid == 2000u);
  EXPECT_EQ(pids(p.zombies), std::vector<uint32_t>{2001});
}

TEST_F(KillPlanTest, WithoutTreeLauncherIsNotGpuRelated) {
  EXPECT_THAT(refusal(plan({.pids = {1000}})), HasSubstr("--any"));
  EXPECT_TRUE(plan({.pids = {1000}, .tree = true}).refusals.empty());
}

// Property: whatever is asked, a target is always a selected pid or (with
// --tree) a member of a selected pid's job, and never one of the protected
// processes.
TEST_F(KillPlanTest, NothingOutsideTheSelectionIsEverATarget) {
  std::vector<uint32_t> all;
  for (const auto& e : procs.entries()) all.push_back(e.pid);
  all.push_back(9999);
  std::mt19937 rng(7);
  for (int round = 0; round < 500; ++round) {
    KillRequest r;
    std::uniform_int_distribution<size_t> pick(0, all.size() - 1);
    for (int i = 0, n = static_cast<int>(rng() % 3); i < n; ++i)
      r.pids.push_back(all[pick(rng)]);
    if (rng() % 3 == 0) r.gpus = {static_cast<int>(rng() % 3)};
    if (rng() % 4 == 0) r.gpus.push_back(static_cast<int>(rng() % 3));
    r.tree = rng() % 2;
    r.any = rng() % 2;
    ctx.euid = rng() % 2 ? 0 : 1000;
    KillPlan p = plan(r);
    std::set<uint32_t> allowed(r.pids.begin(), r.pids.end());
    for (int gpu : r.gpus)
      if (ctx.gpu_pids.count(gpu))
        allowed.insert(ctx.gpu_pids[gpu].begin(), ctx.gpu_pids[gpu].end());
    if (r.tree) {
      std::set<uint32_t> jobs;
      // A job is led by a launcher or GPU-process ancestor (or the pid).
      auto is_gpu = [&](uint32_t pid) {
        for (const auto& [g, ps] : ctx.gpu_pids)
          if (std::find(ps.begin(), ps.end(), pid) != ps.end()) return true;
        return false;
      };
      for (uint32_t s : allowed) {
        std::vector<uint32_t> heads{s};
        for (uint32_t a : procs.ancestors(s)) {
          const ProcEntry* e = procs.find(a);
          if (e && a > 1 && (is_launcher(*e) || is_gpu(a))) heads.push_back(a);
        }
        for (uint32_t h : heads) {
          jobs.insert(h);
          for (uint32_t d : procs.descendants(h)) jobs.insert(d);
        }
      }
      allowed.insert(jobs.begin(), jobs.end());
    }
    for (const auto& t : p.targets) {
      EXPECT_TRUE(allowed.count(t.proc.pid))
          << "round " << round << " pid " << t.proc.pid;
      EXPECT_NE(t.proc.pid, 1u);
      EXPECT_NE(t.proc.pid, 2u);
      EXPECT_NE(t.proc.pid, 50u);
      EXPECT_NE(t.proc.pid, 6000u);
      EXPECT_NE(t.proc.pid, 900u);
      if (ctx.euid != 0) {
        EXPECT_EQ(t.proc.uid, 1000u) << "round " << round;
      }
      if (!r.any) {
        EXPECT_NE(t.proc.pid, 7000u);
      }
    }
  }
}

}  // namespace
}  // namespace gd::procmgmt
