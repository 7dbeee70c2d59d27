// Who probably holds GPU memory whose owner is gone: only CUDA clients
// (nvidia-uvm) of that GPU, ranked by their likeness to the owner.
#include "model/orphan_holders.h"

#include <gtest/gtest.h>

#include "model/process_tree.h"

namespace gd {
namespace {

HolderCandidate candidate(uint32_t pid, std::vector<std::string> devices,
                          uint32_t ppid = 1, std::string user = "bob",
                          std::string name = "python") {
  HolderCandidate c;
  c.proc.pid = pid;
  c.proc.ppid = ppid;
  c.proc.user = std::move(user);
  c.proc.name = std::move(name);
  c.proc.state = "S";
  c.devices = std::move(devices);
  return c;
}

std::vector<uint32_t> pids(const std::vector<ProbableHolder>& hs) {
  std::vector<uint32_t> out;
  for (const auto& h : hs) out.push_back(h.pid);
  return out;
}

TEST(MayHoldCudaMemory, NeedsUvmAndThisGpusNode) {
  EXPECT_TRUE(may_hold_cuda_memory({"nvidia-uvm", "nvidia0", "nvidiactl"}, 0));
  EXPECT_FALSE(may_hold_cuda_memory({"nvidia-uvm", "nvidia1", "nvidiactl"}, 0));
  // An NVML-only client (monitoring agent) never opens nvidia-uvm.
  EXPECT_FALSE(may_hold_cuda_memory({"nvidia0", "nvidiactl"}, 0));
  EXPECT_FALSE(may_hold_cuda_memory({"nvidiactl"}, 0));
  // No per-GPU node at all: which GPU cannot be told, so it may be this one.
  EXPECT_TRUE(may_hold_cuda_memory({"nvidia-uvm", "nvidiactl"}, 3));
  EXPECT_FALSE(may_hold_cuda_memory({"nvidia-uvm-tools", "nvidia0"}, 0));
}

TEST(RankProbableHolders, ThisGpusNodeFirstThenLikenessToTheOwner) {
  VanishedOwner owner;
  owner.pid = 4242;
  owner.last_seen.emplace();
  owner.last_seen->user = "alice";
  owner.last_seen->name = "train.py";
  owner.last_seen->cgroup = "0::/user.slice/job-17.scope";
  owner.last_seen->start_time = 1000;
  owner.gone_at = 2000;

  std::vector<HolderCandidate> cs = {
      candidate(10, {"nvidia-uvm", "nvidiactl"}, 1, "carol", "bash"),
      candidate(11, {"nvidia-uvm", "nvidia0", "nvidiactl"}, 1, "dave", "x"),
      candidate(12, {"nvidia-uvm", "nvidia0", "nvidiactl"}, 1, "alice",
                "train.py"),
      candidate(13, {"nvidia0", "nvidiactl"}, 1, "alice", "train.py"),
      candidate(14, {"nvidia-uvm", "nvidia1"}, 1, "alice", "train.py"),
  };
  cs[2].proc.cgroup = "0::/user.slice/job-17.scope";
  cs[2].proc.start_time = 1500;
  auto ranked = rank_probable_holders(0, cs, {&owner, 1}, 2100);
  // 13 (NVML only) and 14 (another GPU) are never proposed.
  EXPECT_EQ(pids(ranked), (std::vector<uint32_t>{12, 11, 10}));
  std::string why;
  for (const auto& e : ranked[0].evidence) why += e + "\n";
  EXPECT_NE(why.find("same cgroup as the vanished owner 4242"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("same user (alice)"), std::string::npos) << why;
  EXPECT_NE(why.find("started 8 min after the owner 4242 did, 8 min before it "
                     "vanished"),
            std::string::npos)
      << why;
  EXPECT_TRUE(ranked[0].this_gpu);
  EXPECT_FALSE(ranked[2].this_gpu);
}

// As seen on a real H200 (driver 580): `gpudoctor serve` and `nvidia-smi
// -l` hold nvidiactl, nvidia0, nvidia-uvm and nvidia-caps like the forked
// child of a PyTorch process; only the child maps CUDA's libraries.
TEST(RankProbableHolders, AnNvmlClientMappingOnlyTheDriverIsNeverProposed) {
  const std::vector<std::string> files = {"nvidia-caps/nvidia-cap1",
                                          "nvidia-caps/nvidia-cap2",
                                          "nvidia-uvm", "nvidia0", "nvidiactl"};
  HolderCandidate serve = candidate(461, files, 454, "root", "gpudoctor-full");
  serve.proc.libs = {"libcuda.so.580.159.04"};
  HolderCandidate child = candidate(511, files, 1, "root", "python3");
  child.proc.libs = {"libcublas.so.13", "libcuda.so.580.159.04",
                     "libcudart.so.13", "libnccl.so.2"};
  HolderCandidate unknown = candidate(600, files, 1, "root", "python3");
  std::vector<HolderCandidate> cs = {serve, unknown, child};
  auto ranked = rank_probable_holders(0, cs, {}, 0);
  EXPECT_EQ(pids(ranked), (std::vector<uint32_t>{511, 600}));
  std::string why;
  for (const auto& e : ranked[0].evidence) why += e + "\n";
  EXPECT_NE(why.find("maps CUDA libraries (libcublas.so.13, libcudart.so.13, "
                     "libnccl.so.2)"),
            std::string::npos)
      << why;
  EXPECT_TRUE(maps_only_the_driver({"libcuda.so.1"}));
  EXPECT_FALSE(maps_only_the_driver({}));
  EXPECT_FALSE(maps_only_the_driver({"libcuda.so.1", "libcudart.so.12"}));
}

TEST(RankProbableHolders, BoundedList) {
  std::vector<HolderCandidate> cs;
  for (uint32_t pid = 100; pid < 130; ++pid)
    cs.push_back(candidate(pid, {"nvidia-uvm", "nvidia0"}));
  EXPECT_EQ(rank_probable_holders(0, cs, {}, 0).size(), kMaxProbableHolders);
}

TEST(EndHoldersAdvice, NamesTheKillCommand) {
  std::vector<ProbableHolder> hs(2);
  hs[0].pid = 12;
  hs[1].pid = 11;
  std::string a = end_holders_advice(0, hs);
  EXPECT_NE(a.find("`gpudoctor kill 12 11`"), std::string::npos) << a;
  EXPECT_EQ(end_holders_advice(0, {}), "");
}

// A sample as the recorder writes it: the dead owner still listed, the
// holder's process entry carried, an NVML-only agent among the holders.
Sample orphan_sample() {
  Sample s;
  s.t = 5000;
  GpuSample g;
  g.index = 0;
  g.mem_used_bytes = 7ull << 30;
  g.processes = std::vector<GpuProcess>{{4242, 6ull << 30, "compute"}};
  s.gpus.push_back(g);
  ProcessSample gone;
  gone.pid = 4242;
  gone.state = "missing";
  ProcessSample child;
  child.pid = 4300;
  child.ppid = 1;
  child.user = "alice";
  child.name = "python";
  child.state = "S";
  ProcessSample agent;
  agent.pid = 900;
  agent.name = "dcgm-exporter";
  agent.state = "S";
  s.processes = {agent, gone, child};
  s.device_holders =
      std::vector<DeviceHolder>{{900, {"nvidia0", "nvidiactl"}},
                                {4300, {"nvidia-uvm", "nvidia0", "nvidiactl"}}};
  return s;
}

TEST(ProbableHoldersIn, NamesTheHolderOfTheDeadOwnersMemory) {
  Sample s = orphan_sample();
  auto held = probable_holders_in(s, ProcessTree(s), true);
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0].gpu, 0);
  EXPECT_EQ(held[0].dead_owners, std::vector<uint32_t>{4242});
  EXPECT_EQ(pids(held[0].holders), std::vector<uint32_t>{4300});
}

TEST(ProbableHoldersIn, NothingWithoutALookOrAnOrphan) {
  Sample s = orphan_sample();
  // Inside a container, a missing pid is just another namespace's.
  EXPECT_TRUE(probable_holders_in(s, ProcessTree(s), false).empty());
  s.device_holders.reset();
  EXPECT_TRUE(probable_holders_in(s, ProcessTree(s), true).empty());
  s = orphan_sample();
  s.processes[1].state = "S";  // the owner is alive: nothing is orphaned
  EXPECT_TRUE(probable_holders_in(s, ProcessTree(s), true).empty());
}

}  // namespace
}  // namespace gd
