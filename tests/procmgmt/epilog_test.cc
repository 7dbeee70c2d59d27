#include "procmgmt/epilog.h"

#include <gtest/gtest.h>

#include <map>

namespace gd::procmgmt {
namespace {

// A node: init, slurmd (with the epilog script and gpudoctor under it), a
// job 77 (cgroup), a daemonised child of job 77 (environment only), job
// 78's process, an NVML monitor, a CUDA holder that started before the job
// and one that started during it, and root's CUDA holder.
ProcEntry entry(uint32_t pid, uint32_t ppid, std::string comm, uint32_t uid,
                uint64_t start_ticks,
                std::optional<std::string> job = std::nullopt) {
  ProcEntry e;
  e.pid = pid;
  e.ppid = ppid;
  e.state = 'S';
  e.uid = uid;
  e.user = uid == 0 ? "root" : "alice";
  e.comm = comm;
  e.cmdline = comm + " --run";
  e.starttime = start_ticks;
  e.slurm_job_id = std::move(job);
  return e;
}

struct Node {
  // Boot at 0; ticks are 1/100 s: start 10000 = 100 s.
  ProcSnapshot procs = ProcSnapshot::from_entries(
      {entry(1, 0, "init", 0, 1), entry(100, 1, "slurmd", 0, 100),
       entry(200, 100, "epilog.sh", 0, 90000),
       entry(201, 200, "gpudoctor", 0, 90001),
       entry(300, 1, "slurmstepd", 0, 20000, "77"),
       entry(301, 300, "python", 1000, 20001, "77"),
       entry(400, 1, "python", 1000, 30000),  // daemonised, env 77
       entry(500, 1, "python", 1000, 30000),  // env 78
       entry(510, 1, "python", 1000, 30000, "78"),
       entry(600, 1, "nv-monitor", 1000, 30000),
       entry(700, 1, "cuda-old", 1000, 100),
       entry(800, 1, "cuda-new", 1000, 30000),
       entry(900, 1, "cuda-root", 0, 30000)},
      /*boot_time=*/0.0);
  DeviceScan devices;
  std::map<uint32_t, std::string> environ = {
      {200, "77"}, {201, "77"}, {400, "77"}, {500, "78"}};

  Node() {
    auto holder = [](uint32_t pid, std::vector<std::string> devs) {
      DeviceHolder h;
      h.pid = pid;
      h.devices = std::move(devs);
      return h;
    };
    devices.holders = {holder(400, {"nvidia0", "nvidia-uvm", "nvidiactl"}),
                       holder(500, {"nvidia0", "nvidia-uvm", "nvidiactl"}),
                       holder(510, {"nvidia0", "nvidia-uvm", "nvidiactl"}),
                       holder(600, {"nvidia0", "nvidiactl"}),
                       holder(700, {"nvidia0", "nvidia-uvm", "nvidiactl"}),
                       holder(800, {"nvidia0", "nvidia-uvm", "nvidiactl"}),
                       holder(900, {"nvidia0", "nvidia-uvm", "nvidiactl"})};
  }
  EpilogSelection select(std::optional<double> start = std::nullopt) {
    EpilogRequest r{"77", {0}, start, 201};
    return select_epilog_leftovers(
        r, procs, devices, [&](uint32_t pid) -> std::optional<std::string> {
          auto it = environ.find(pid);
          if (it == environ.end()) return std::nullopt;
          return it->second;
        });
  }
};

std::map<uint32_t, std::string> by_pid(const std::vector<EpilogProcess>& list) {
  std::map<uint32_t, std::string> out;
  for (const auto& p : list) out[p.proc.pid] = p.why;
  return out;
}

TEST(Epilog, FindsTheJobsLeftoversAndNothingElse) {
  Node n;
  auto sel = n.select();
  auto left = by_pid(sel.leftovers);
  auto spared = by_pid(sel.spared);
  EXPECT_EQ(left.size(), 3u) << testing::PrintToString(left);
  EXPECT_EQ(left[301], "in the job's cgroup");
  EXPECT_EQ(left[400], "SLURM_JOB_ID=77 in its environment");
  EXPECT_EQ(left[800], "holds nvidia0, started during the job");
  // The job started when its first process did (no scontrol): 200 s.
  ASSERT_TRUE(sel.job_start);
  EXPECT_NEAR(*sel.job_start, 200.0, 0.1);
  EXPECT_EQ(spared[300], "a system daemon");  // slurmstepd in the cgroup
  EXPECT_EQ(spared[201], "gpudoctor or its caller (the epilog)");
  EXPECT_EQ(spared[200], "gpudoctor or its caller (the epilog)");
  EXPECT_EQ(spared[500], "job 78's process");
  EXPECT_EQ(spared[510], "job 78's process");
  EXPECT_NE(spared[600].find("NVML-only monitor"), std::string::npos);
  EXPECT_EQ(spared[700], "holds nvidia0, started before the job");
  EXPECT_EQ(spared[900], "holds nvidia0, root's, names no job");
  EXPECT_FALSE(left.count(1));
  EXPECT_FALSE(left.count(100));
}

TEST(Epilog, SchedulersStartTimeWins) {
  Node n;
  // The job started at 350 s: the holder that started at 300 s was there
  // before it.
  auto left = by_pid(n.select(350.0).leftovers);
  EXPECT_FALSE(left.count(800));
  EXPECT_TRUE(left.count(400));
}

TEST(Epilog, UnknownStartSparesUnnamedHolders) {
  Node n;
  n.procs = ProcSnapshot::from_entries(
      {entry(1, 0, "init", 0, 1), entry(800, 1, "cuda-new", 1000, 30000)}, 0.0);
  auto sel = n.select();
  EXPECT_TRUE(sel.leftovers.empty());
  EXPECT_NE(by_pid(sel.spared)[800].find("not known"), std::string::npos);
}

TEST(Epilog, GpuJudgedBackAndReason) {
  Sample s;
  GpuSample g;
  g.index = 3;
  g.mem_used_bytes = 41ull << 30;
  g.processes.emplace();
  GpuProcess gp;
  gp.pid = 4194303;  // no such process
  g.processes->push_back(gp);
  s.gpus = {g};
  EpilogGpu j = judge_epilog_gpu(s, 3, {}, "/proc");
  EXPECT_FALSE(j.back);
  EXPECT_EQ(epilog_reason("1234", j),
            "gpudoctor: GPU 3 holds 41.0 GiB after job 1234 ended; pid "
            "4194303 gone");
  // Another job's process: its memory is not this job's.
  j = judge_epilog_gpu(s, 3, {4194303}, "/proc");
  EXPECT_FALSE(j.back);  // its listed bytes are unknown: 41 GiB unexplained
  s.gpus[0].processes->at(0).used_bytes = 41ull << 30;
  j = judge_epilog_gpu(s, 3, {4194303}, "/proc");
  EXPECT_TRUE(j.back);
  s.gpus[0].processes->clear();
  s.gpus[0].mem_used_bytes = 300ull << 20;
  EXPECT_TRUE(judge_epilog_gpu(s, 3, {}, "/proc").back);
  s.gpus[0].mem_used_bytes = 2ull << 30;
  j = judge_epilog_gpu(s, 3, {}, "/proc");
  EXPECT_FALSE(j.back);
  EXPECT_EQ(epilog_reason("9", j),
            "gpudoctor: GPU 3 holds 2.0 GiB after job 9 ended; no process "
            "listed");
  EXPECT_FALSE(judge_epilog_gpu(s, 5, {}, "/proc").back);  // no such GPU
}

}  // namespace
}  // namespace gd::procmgmt
