#include "accounting/owner.h"

#include <gtest/gtest.h>

namespace gd::accounting {
namespace {

Sample two_rank_sample() {
  Sample s;
  auto proc = [](uint32_t pid, uint32_t ppid, std::string name) {
    ProcessSample p;
    p.pid = pid;
    p.ppid = ppid;
    p.name = name;
    p.cmdline = name;
    p.user = "alice";
    p.state = "S";
    return p;
  };
  s.processes = {proc(10, 1, "torchrun"), proc(11, 10, "python"),
                 proc(12, 10, "python"), proc(20, 1, "python")};
  s.processes[2].cgroup =
      "/kubepods/burstable/pod1a2b3c4d-0000-1111-2222-333344445555/"
      "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
  GpuSample g;
  g.processes.emplace();
  for (uint32_t pid : {11u, 12u, 20u, 30u}) {
    GpuProcess gp;
    gp.pid = pid;
    g.processes->push_back(gp);
  }
  s.gpus = {g};
  return s;
}

TEST(OwnerOf, RanksOfALauncherAreOneJob) {
  const Sample s = two_rank_sample();
  ProcessTree tree(s);
  OwnerKeys a, b, c;
  owner_of(tree, 11, a);
  owner_of(tree, 12, b);
  owner_of(tree, 20, c);
  EXPECT_EQ(a.job_key, b.job_key);
  EXPECT_NE(a.job_key, c.job_key);
  EXPECT_EQ(a.job_label, "torchrun (pid 10)");
  EXPECT_EQ(a.user_label, "alice");
  EXPECT_EQ(a.container_label, "(no container)");
  EXPECT_NE(b.container_key, a.container_key);
  EXPECT_NE(b.container_label.find("k8s"), std::string::npos);
}

TEST(OwnerOf, SlurmJobsByTheirNames) {
  Sample s = two_rank_sample();
  s.processes[1].slurm_job_id = "1234";  // from its environment
  s.processes[3].cgroup =                // a trace without the field
      "/system.slice/slurmstepd.scope/job_77/step_0/user/task_0";
  s.slurm_jobs = {{"1234", "train-llm", "alice", "gpu-a"}};
  ProcessTree tree(s);
  OwnerKeys a, c;
  owner_of(tree, 11, a);
  owner_of(tree, 20, c);
  EXPECT_EQ(a.job_key, "slurm:1234");
  EXPECT_EQ(a.job_label, "slurm 1234 train-llm (alice, gpu-a)");
  EXPECT_EQ(c.job_key, "slurm:77");
  EXPECT_EQ(c.job_label, "slurm 77");  // its name not known
}

TEST(OwnerOf, OtherJobsReadAsTheirLaunchersCommand) {
  Sample s = two_rank_sample();
  s.processes[0].cmdline = "torchrun --nproc-per-node 2 train.py";
  s.processes[3].cmdline = "python3 serve.py --port 8000";
  s.processes[3].name = "python3";
  ProcessTree tree(s);
  OwnerKeys a, c;
  owner_of(tree, 11, a);
  owner_of(tree, 20, c);
  EXPECT_EQ(a.job_label, "torchrun --nproc-per-node 2 train.py (pid 10)");
  EXPECT_EQ(c.job_label, "python3 serve.py --port 8000 (pid 20)");
  s.processes[3].cmdline = "python3 serve.py --api-key=s3cret";
  tree.rebuild(s);
  owner_of(tree, 20, c);
  EXPECT_EQ(c.job_label, "python3 serve.py --api-key=<redacted> (pid 20)");
  s.processes[3].cmdline = std::string(500, 'x');
  tree.rebuild(s);
  owner_of(tree, 20, c);
  EXPECT_EQ(c.job_label, std::string(kJobCommandMax, 'x') + "... (pid 20)");
}

TEST(OwnerOf, PidNotInProc) {
  const Sample s = two_rank_sample();
  ProcessTree tree(s);
  OwnerKeys o;
  owner_of(tree, 30, o);
  EXPECT_EQ(o.job_key, "pid:30");
  EXPECT_EQ(o.user_label, "unknown");
  EXPECT_NE(o.job_label.find("not in /proc"), std::string::npos);
}

}  // namespace
}  // namespace gd::accounting
