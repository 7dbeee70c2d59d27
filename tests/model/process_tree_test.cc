// The process model: parent/child links (PidTree), which GPU processes form
// one job (launcher grouping) and which host processes are a job's
// data-loader workers (ProcessTree).
#include "model/process_tree.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace gd::test {
namespace {

constexpr uint64_t kGiB = 1ull << 30;

ProcessSample proc(uint32_t pid, std::optional<uint32_t> ppid, std::string name,
                   std::string cmdline = "", double cpu = 1,
                   std::string state = "S") {
  ProcessSample p;
  p.pid = pid;
  p.ppid = ppid;
  p.name = std::move(name);
  p.cmdline = cmdline.empty() ? p.name : std::move(cmdline);
  p.cpu_pct = cpu;
  p.state = std::move(state);
  return p;
}

// GPU i runs pid ranks[i].
Sample on_gpus(std::vector<uint32_t> ranks, std::vector<ProcessSample> procs) {
  Sample s;
  for (size_t i = 0; i < ranks.size(); ++i) {
    GpuSample g;
    g.index = static_cast<int>(i);
    g.util_pct = 90;
    g.processes =
        std::vector<GpuProcess>{GpuProcess{ranks[i], 10 * kGiB, "compute"}};
    s.gpus.push_back(g);
  }
  s.processes = std::move(procs);
  return s;
}

std::vector<uint32_t> groups_of(const Sample& s) {
  ProcessTree tree(s);
  std::vector<uint32_t> out;
  for (const GpuJob& j : tree.gpu_jobs(85)) out.push_back(j.group);
  return out;
}

TEST(ProcessTree, EveryLauncherGroupsItsRanks) {
  struct Launcher {
    std::string name, cmdline;
  };
  for (const Launcher& l : std::vector<Launcher>{
           {"torchrun",
            "/usr/bin/python3 /usr/local/bin/torchrun --nproc_per_node=2 t.py"},
           {"python3",
            "python3 -m torch.distributed.run --nproc_per_node=2 t.py"},
           {"mpirun", "mpirun -np 2 python t.py"},
           {"mpiexec.hydra", "mpiexec.hydra -n 2 python t.py"},
           {"deepspeed",
            "/usr/bin/python3 /usr/local/bin/deepspeed --num_gpus=2 t.py"},
           {"python3",
            "/usr/bin/python3 -u -m deepspeed.launcher.launch "
            "--world_info=e30= t.py"},
           {"accelerate",
            "/usr/bin/python3 /usr/local/bin/accelerate launch t.py"},
           {"srun", "srun -n 2 python t.py"},
           {"slurmstepd", "slurmstepd: [4242.0]"},
           {"hydra_pmi_proxy",
            "/usr/bin/hydra_pmi_proxy --control-port node1:4000"}}) {
    SCOPED_TRACE(l.cmdline);
    // launcher 500 under a shell 400; ranks 501, 502.
    Sample s = on_gpus({501, 502},
                       {proc(400, 1, "bash"), proc(500, 400, l.name, l.cmdline),
                        proc(501, 500, "python"), proc(502, 500, "python")});
    EXPECT_EQ(groups_of(s), (std::vector<uint32_t>{500, 500}));
  }
}

TEST(ProcessTree, NearestLauncherWinsOverAnOuterOne) {
  // deepspeed -> python -m deepspeed.launcher.launch -> ranks.
  Sample s = on_gpus(
      {502, 503},
      {proc(500, 400, "deepspeed", "/usr/bin/deepspeed t.py"),
       proc(501, 500, "python3", "python3 -m deepspeed.launcher.launch t.py"),
       proc(502, 501, "python"), proc(503, 501, "python")});
  EXPECT_EQ(groups_of(s), (std::vector<uint32_t>{501, 501}));
}

TEST(ProcessTree, RanksWithAnUnlistedCommonParentAreOneJob) {
  // Traces of older versions list GPU processes and descendants, not
  // ancestors.
  Sample s =
      on_gpus({501, 502}, {proc(501, 500, "python"), proc(502, 500, "python")});
  EXPECT_EQ(groups_of(s), (std::vector<uint32_t>{500, 500}));
}

TEST(ProcessTree, JobsFromOneShellOrInitAreSeparate) {
  for (const char* shell :
       {"bash", "tmux: server", "sshd", "containerd-shim-runc-v2"}) {
    SCOPED_TRACE(shell);
    Sample s =
        on_gpus({501, 502}, {proc(400, 1, shell), proc(501, 400, "python"),
                             proc(502, 400, "python")});
    EXPECT_EQ(groups_of(s), (std::vector<uint32_t>{501, 502}));
  }
  Sample orphans =
      on_gpus({501, 502}, {proc(501, 1, "python"), proc(502, 1, "python")});
  EXPECT_EQ(groups_of(orphans), (std::vector<uint32_t>{501, 502}));
}

TEST(ProcessTree, SlurmstepdGroupsButIsNotALauncherToActOn) {
  ProcessSample d = proc(500, 1, "slurmstepd", "slurmstepd: [4242.0]");
  EXPECT_TRUE(is_job_step_daemon(d));
  EXPECT_FALSE(is_launcher_process(d));
  EXPECT_FALSE(is_generic_parent(d));
}

TEST(ProcessTree, WorkersAreAllDescendantsAndTheirCpuIsCounted) {
  // Rank 501 with two workers, one of which forked a helper (grandchild);
  // 900 is an unrelated busy process.
  Sample s = on_gpus({501}, {proc(501, 400, "python", "", 100, "R"),
                             proc(601, 501, "pt_data_worker", "", 99, "R"),
                             proc(602, 501, "pt_data_worker", "", 40, "R"),
                             proc(603, 602, "ffmpeg", "", 90, "R"),
                             proc(900, 1, "stress", "", 800, "R")});
  ProcessTree tree(s);
  auto jobs = tree.gpu_jobs(85);
  ASSERT_EQ(jobs.size(), 1u);
  const GpuJob& j = jobs[0];
  std::vector<uint32_t> workers = j.workers;
  std::sort(workers.begin(), workers.end());
  EXPECT_EQ(workers, (std::vector<uint32_t>{601, 602, 603}));
  EXPECT_EQ(j.workers_known, 3);
  EXPECT_EQ(j.workers_saturated, 2);  // 99% and 90%
  EXPECT_EQ(j.workers_cpu_bound, 3);  // 602 is runnable at 40%: contended
  EXPECT_DOUBLE_EQ(j.cpu_pct, 100 + 99 + 40 + 90);
  EXPECT_DOUBLE_EQ(j.main_cpu_pct, 100);
  EXPECT_TRUE(j.visible);
}

// The diagnosis asks for the jobs at several saturation marks; recounting a
// copy must give what a fresh walk at that mark gives.
TEST(ProcessTree, RecountingAtAnotherMarkMatchesAFreshWalk) {
  Sample s = on_gpus({501}, {proc(501, 400, "python", "", 100, "R"),
                             proc(601, 501, "pt_data_worker", "", 99, "R"),
                             proc(602, 501, "pt_data_worker", "", 40, "S"),
                             proc(603, 602, "ffmpeg", "", 90, "S")});
  ProcessTree tree(s);
  for (double mark : {30.0, 85.0, 95.0, 100.0}) {
    SCOPED_TRACE(mark);
    auto recounted = tree.gpu_jobs(85);
    tree.count_saturated(recounted, mark);
    auto fresh = tree.gpu_jobs(mark);
    ASSERT_EQ(recounted.size(), 1u);
    EXPECT_EQ(recounted[0].workers_saturated, fresh[0].workers_saturated);
    EXPECT_EQ(recounted[0].workers_cpu_bound, fresh[0].workers_cpu_bound);
    EXPECT_EQ(recounted[0].workers_known, fresh[0].workers_known);
  }
  auto jobs = tree.gpu_jobs(95);
  EXPECT_EQ(jobs[0].workers_saturated, 1);  // 99%
  EXPECT_EQ(jobs[0].workers_cpu_bound, 1);  // and 601 is the runnable one
  tree.count_saturated(jobs, 30);
  EXPECT_EQ(jobs[0].workers_saturated, 3);
}

TEST(ProcessTree, AWorkerWithItsOwnContextBelongsToItsParentsJob) {
  Sample s = on_gpus(
      {501, 601}, {proc(501, 400, "python"), proc(601, 501, "pt_data_worker")});
  ProcessTree tree(s);
  auto jobs = tree.gpu_jobs(85);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].pid, 501u);
  EXPECT_EQ(jobs[0].gpus, (std::vector<int>{0, 1}));
}

TEST(ProcessTree, CyclicPpidDataDoesNotHang) {
  Sample s =
      on_gpus({501}, {proc(501, 502, "python"), proc(502, 501, "python")});
  ProcessTree tree(s);
  EXPECT_LE(tree.gpu_jobs(85).size(), 1u);
  EXPECT_LE(tree.descendants(501).size(), 1u);
  EXPECT_FALSE(tree.is_ancestor(999, 501));
}

TEST(PidTree, DescendantsAreDepthFirstEachParentBeforeItsChildren) {
  // 10 -> {12, 11}; 11 -> 13 -> 14; 12 -> 15. Listed in no particular order.
  PidTree t({{13, 11}, {15, 12}, {11, 10}, {12, 10}, {14, 13}, {10, 1}});
  std::vector<std::pair<uint32_t, int>> walk;
  for (const auto& d : t.walk_descendants(10))
    walk.emplace_back(d.pid, d.depth);
  EXPECT_EQ(walk, (std::vector<std::pair<uint32_t, int>>{
                      {11, 1}, {13, 2}, {14, 3}, {12, 1}, {15, 2}}));
  EXPECT_EQ(t.children(10), (std::vector<uint32_t>{11, 12}));
  EXPECT_EQ(t.descendants(15), std::vector<uint32_t>{});
}

TEST(PidTree, AncestorsEndAtTheFirstUnrecordedParent) {
  // 14's chain: 13, 11, 10, and 1 (recorded as 10's parent, not itself
  // in the tree); pid 1's own parent 0 is no parent.
  PidTree t({{13, 11}, {11, 10}, {14, 13}, {10, 1}});
  EXPECT_EQ(t.ancestors(14), (std::vector<uint32_t>{13, 11, 10, 1}));
  EXPECT_TRUE(t.is_ancestor(1, 14));
  EXPECT_FALSE(t.is_ancestor(14, 13));
  EXPECT_EQ(t.parent(13), 11u);
  EXPECT_EQ(t.parent(1), std::nullopt);
  EXPECT_EQ(t.ancestors(999), std::vector<uint32_t>{});
}

TEST(PidTree, CyclesAndSelfParentsEndEveryWalk) {
  PidTree t({{1, 2}, {2, 3}, {3, 1}, {7, 7}});
  EXPECT_EQ(t.descendants(1).size(), 2u);
  EXPECT_EQ(t.ancestors(1).size(), 2u);
  EXPECT_EQ(t.parent(7), std::nullopt);
  EXPECT_EQ(t.children(7), std::vector<uint32_t>{});
}

TEST(ProcessTree, LiveDescendantsLeaveZombiesOut) {
  Sample s = on_gpus(
      {501}, {proc(501, 400, "python"), proc(601, 501, "pt_data_worker"),
              proc(602, 501, "pt_data_worker", "", 0, "Z")});
  ProcessTree tree(s);
  EXPECT_EQ(tree.live_descendants(501), std::vector<uint32_t>{601});
  EXPECT_EQ(tree.descendants(501), (std::vector<uint32_t>{601, 602}));
}

TEST(ProcessTree, TheWalkUpFromAGpuProcessEndsAtALauncherOrAGenericParent) {
  EXPECT_TRUE(ends_job_ancestry(500, "torchrun", "torchrun t.py"));
  EXPECT_TRUE(ends_job_ancestry(500, "slurmstepd", "slurmstepd: [42.0]"));
  EXPECT_TRUE(ends_job_ancestry(500, "bash", "-bash"));
  EXPECT_TRUE(ends_job_ancestry(1, "python", "python t.py"));
  // A python wrapper between a launcher and the ranks is walked past.
  EXPECT_FALSE(ends_job_ancestry(500, "python", "python wrapper.py"));
}

}  // namespace
}  // namespace gd::test
