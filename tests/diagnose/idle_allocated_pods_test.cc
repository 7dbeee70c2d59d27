// gpu-idle-allocated on Kubernetes: a GPU the kubelet allocated to a pod
// that runs nothing on it is idle-allocated, naming the pod; holders are
// named with their pods; a pod that uses its GPU, or that shares a busy GPU,
// is not.
#include <gtest/gtest.h>

#include "scenario_builder.h"
#include "text_contains.h"

namespace gd::test {
namespace {

ProcessPod pod_of(const std::string& ns, const std::string& name,
                  bool deleted = false) {
  ProcessPod p;
  p.uid = "0b1c2d3e-0000-4000-8000-" + std::string(12, '1');
  p.namespace_ = ns;
  p.name = name;
  p.container = "main";
  p.deleted = deleted;
  return p;
}

PodAllocation allocation(int gpu, const std::string& ns,
                         const std::string& name,
                         std::optional<int> replica = std::nullopt) {
  return {gpu,     "GPU-0000000" + std::to_string(gpu),
          replica, "nvidia.com/gpu",
          ns,      name,
          "main"};
}

// Two GPUs for 10 minutes: GPU 0 time-shared by pods ml/a (busy, pid 100)
// and ml/b (nothing running); GPU 1 allocated to infer/idle, idle, with
// `holder` deciding whether that pod's process holds memory on it.
std::vector<Finding> cluster(bool holder, bool gpu1_busy = false) {
  auto h = make_header(2);
  Jitter j;
  auto samples = make_samples(60, 10.0, [&](size_t, Sample& s) {
    auto g0 = busy_gpu(0, j);
    g0.processes->push_back({100, 20 * kGiB, "compute"});
    s.gpus.push_back(g0);
    auto g1 = gpu1_busy ? busy_gpu(1, j) : idle_gpu(1, j);
    auto a = process(100, "python");
    a.pod = pod_of("ml", "a");
    s.processes.push_back(a);
    if (holder) {
      g1.processes->push_back({200, 8 * kGiB, "compute"});
      auto idle = process(200, "python");
      idle.state = "S";
      idle.cpu_pct = 0;
      idle.pod = pod_of("infer", "idle", true);
      s.processes.push_back(idle);
    }
    s.gpus.push_back(g1);
    s.pod_allocations = std::vector<PodAllocation>{
        allocation(0, "ml", "a", 0), allocation(0, "ml", "b", 1),
        allocation(1, "infer", "idle")};
  });
  return with_id(run_diagnose(h, samples), "gpu-idle-allocated");
}

TEST(IdleAllocatedPods, APodsGpuWithNoProcessIsIdleAllocatedNamingThePod) {
  auto f = cluster(false);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].gpus, std::vector<int>{1});
  EXPECT_EQ(f[0].severity, "info");
  EXPECT_TRUE(f[0].pids.empty());
  EXPECT_TRUE(contains(f[0].evidence,
                       "the kubelet allocated it to pod infer/idle, which ran "
                       "no process on it"))
      << f[0].evidence;
  EXPECT_TRUE(contains(f[0].action, "kubectl delete pod -n infer idle"))
      << f[0].action;
}

TEST(IdleAllocatedPods, AHolderIsNamedWithItsDeletedPod) {
  auto f = cluster(true);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].gpus, std::vector<int>{1});
  EXPECT_EQ(f[0].pids, std::vector<uint32_t>{200});
  EXPECT_TRUE(contains(
      f[0].evidence, "pid 200 (python, alice, pod infer/idle/main (deleted))"))
      << f[0].evidence;
  // Its pod ran a process on the GPU: not also an unused allocation.
  EXPECT_FALSE(contains(f[0].evidence, "which ran no process"))
      << f[0].evidence;
}

TEST(IdleAllocatedPods, SilentWhileTheGpuIsBusy) {
  // GPU 0's second pod runs nothing, but GPU 0 is busy with the first.
  EXPECT_TRUE(cluster(false, true).empty());
}

TEST(IdleAllocatedPods, SilentWithoutTheKubeletsAllocations) {
  auto h = make_header(1);
  Jitter j;
  auto samples = make_samples(
      60, 10.0, [&](size_t, Sample& s) { s.gpus.push_back(idle_gpu(0, j)); });
  EXPECT_TRUE(with_id(run_diagnose(h, samples), "gpu-idle-allocated").empty());
}

}  // namespace
}  // namespace gd::test
