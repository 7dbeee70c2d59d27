// `k` in top goes through procmgmt's kill plan and session: a real child
// process listed on a GPU is planned, waits for the yes, is ended, and the
// memory check runs; PID 1 and a process NVML does not list are refused.
#include "monitor/kill_job.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "top_fixture.h"

namespace gd::monitor {
namespace {

using namespace gd::top::test;
using Stage = KillJob::Stage;

pid_t spawn_sleeper() {
  pid_t pid = fork();
  if (pid == 0) {
    for (;;) pause();
  }
  return pid;
}

// A sample listing `pid` on GPU 0 while `listed` is true.
Sample gpu_sample(uint32_t pid, bool listed) {
  Sample s;
  s.t = kT0;
  auto g = gpu(0, 50, 10 * kGiB);
  if (listed) g.processes->push_back({pid, 8 * kGiB, "compute"});
  s.gpus = {g};
  return s;
}

bool wait_stage(const KillJob& job, Stage want) {
  for (int i = 0; i < 1000 && job.stage() != want; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return job.stage() == want;
}

TEST(KillJob, PlansAsksThenEndsTheProcessAndChecksTheMemory) {
  pid_t child = spawn_sleeper();
  ASSERT_GT(child, 0);
  std::atomic<bool> alive{true};
  std::atomic<int> wakes{0};
  // NVML lists the child until it is reaped (as the driver frees memory
  // when the process ends).
  std::thread reaper([&] {
    waitpid(child, nullptr, 0);
    alive = false;
  });
  KillJobOptions o;
  o.timeout_s = 3;
  KillJob job(
      {static_cast<uint32_t>(child)},
      [&] { return gpu_sample(static_cast<uint32_t>(child), alive); },
      header_with(1), o, [&] { ++wakes; });
  ASSERT_TRUE(wait_stage(job, Stage::kPlanned));
  EXPECT_TRUE(job.can_proceed());
  ASSERT_EQ(job.plan().targets.size(), 1u);
  EXPECT_EQ(job.plan().targets[0].proc.pid, static_cast<uint32_t>(child));
  EXPECT_EQ(kill(child, 0), 0) << "nothing is sent before the yes";
  job.confirm();
  ASSERT_TRUE(wait_stage(job, Stage::kDone));
  reaper.join();
  EXPECT_EQ(job.outcome().result, procmgmt::KillResult::kReleased);
  auto steps = job.steps();
  ASSERT_FALSE(steps.empty());
  EXPECT_EQ(steps[0].pid, static_cast<uint32_t>(child));
  EXPECT_EQ(steps[0].sig, SIGTERM);
  EXPECT_TRUE(steps[0].error.empty());
  EXPECT_GE(wakes.load(), 3);
}

TEST(KillJob, RefusesPidOneAndProcessesThatAreNotOnAGpu) {
  pid_t bystander = spawn_sleeper();
  KillJob job(
      {1, static_cast<uint32_t>(bystander)},
      [] { return gpu_sample(0, false); }, header_with(1), {}, [] {});
  ASSERT_TRUE(wait_stage(job, Stage::kPlanned));
  EXPECT_FALSE(job.can_proceed());
  EXPECT_EQ(job.plan().refusals.size(), 2u);
  job.confirm();  // ignored: refused plans never run
  EXPECT_EQ(job.stage(), Stage::kPlanned);
  EXPECT_EQ(kill(bystander, 0), 0);
  kill(bystander, SIGKILL);
  waitpid(bystander, nullptr, 0);
}

}  // namespace
}  // namespace gd::monitor
