// The kill session without a terminal: real child processes are signalled,
// NVML is a scripted sequence of samples, and the outcome is checked as the
// data the view prints.
#include "procmgmt/kill_session.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <string>
#include <vector>

#include "a100_header.h"
#include "waiting_child.h"

namespace gd::procmgmt {
namespace {

constexpr uint64_t kSessionGiB = 1ull << 30;

struct Recorder : KillObserver {
  struct Sent {
    uint32_t pid;
    int sig;
    std::string error;
  };
  std::vector<Sent> sent;
  std::vector<size_t> escalations;
  void on_signal(uint32_t pid, int sig, const std::string& error) override {
    sent.push_back({pid, sig, error});
  }
  void on_escalate(size_t alive, double) override {
    escalations.push_back(alive);
  }
};

// What NVML says about GPU 0: `used` bytes, `pids` listed with 6 GiB each.
Sample gpu0(uint64_t used, std::vector<uint32_t> pids) {
  Sample s;
  GpuSample g;
  g.index = 0;
  g.mem_used_bytes = used;
  g.processes.emplace();
  for (uint32_t pid : pids) {
    GpuProcess p;
    p.pid = pid;
    p.used_bytes = 6 * kSessionGiB;
    g.processes->push_back(p);
  }
  s.gpus.push_back(g);
  return s;
}

class KillSessionTest : public ::testing::Test {
 protected:
  void TearDown() override {
    for (pid_t c : children_) {
      kill(c, SIGKILL);
      waitpid(c, nullptr, 0);
    }
    std::filesystem::remove_all(dev_);
  }
  // Plans to signal `child`, listed by NVML on `gpus`.
  KillPlan plan_for(pid_t child, std::vector<int> gpus) {
    children_.push_back(child);
    auto entry = read_proc_entry("/proc", static_cast<uint32_t>(child));
    EXPECT_TRUE(entry) << "child " << child << " is not in /proc";
    KillPlan plan;
    if (entry) plan.targets.push_back({*entry, "GPU process on GPU 0", gpus});
    return plan;
  }
  KillSessionOptions options(double timeout_s, bool force = false) {
    KillSessionOptions o;
    o.dev_prefix = dev_;  // no process has these device files open
    o.timeout_s = timeout_s;
    o.force = force;
    return o;
  }
  std::vector<pid_t> children_;
  std::string dev_ = [] {
    char tmpl[] = "/tmp/gd_kill_session_dev_XXXXXX";
    return std::string(mkdtemp(tmpl));
  }();
  ProcSnapshot procs_ = ProcSnapshot::read("/proc");
};

TEST_F(KillSessionTest, TermEndsTheHolderAndNvmlFreesTheMemory) {
  pid_t child = gd::test::spawn_waiting_child(false);
  ASSERT_GT(child, 0);
  auto pid = static_cast<uint32_t>(child);
  KillPlan plan = plan_for(child, {0});
  Sample before = gpu0(7 * kSessionGiB, {pid});
  // The driver frees the memory one re-read after the process is gone.
  std::vector<Sample> nvml{gpu0(7 * kSessionGiB, {pid}), gpu0(kSessionGiB, {})};
  size_t reads = 0;
  auto read_gpus = [&] { return nvml[std::min(reads++, nvml.size() - 1)]; };
  Recorder rec;
  KillOutcome out =
      run_kill_session(plan, {}, procs_, before, test::a100_header(), read_gpus,
                       options(5), rec);
  EXPECT_EQ(out.result, KillResult::kReleased);
  EXPECT_EQ(out.exit_code(), kKillExitReleased);
  ASSERT_EQ(rec.sent.size(), 1u);
  EXPECT_EQ(rec.sent[0].pid, pid);
  EXPECT_EQ(rec.sent[0].sig, SIGTERM);
  EXPECT_EQ(rec.sent[0].error, "");
  EXPECT_EQ(reads, 2u) << "NVML is re-read until it stops listing the pid";
  ASSERT_EQ(out.memory.size(), 1u);
  EXPECT_EQ(out.memory[0].gpu, 0);
  EXPECT_EQ(out.memory[0].before, 7 * kSessionGiB);
  EXPECT_EQ(out.memory[0].after, kSessionGiB);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
}

// What an H100 with driver 580 did: NVML stopped listing the ended process
// at once, and its used memory fell only on a later read.
TEST_F(KillSessionTest, ReleasedOnlyOnceTheUsedMemoryFalls) {
  pid_t child = gd::test::spawn_waiting_child(false);
  ASSERT_GT(child, 0);
  auto pid = static_cast<uint32_t>(child);
  KillPlan plan = plan_for(child, {0});
  Sample before = gpu0(7 * kSessionGiB, {pid});
  std::vector<Sample> nvml{gpu0(7 * kSessionGiB, {}), gpu0(7 * kSessionGiB, {}),
                           gpu0(kSessionGiB, {})};
  size_t reads = 0;
  auto read_gpus = [&] { return nvml[std::min(reads++, nvml.size() - 1)]; };
  Recorder rec;
  KillOutcome out =
      run_kill_session(plan, {}, procs_, before, test::a100_header(), read_gpus,
                       options(5), rec);
  EXPECT_EQ(out.result, KillResult::kReleased);
  EXPECT_EQ(reads, 3u) << "NVML is re-read until the used memory falls";
  ASSERT_EQ(out.memory.size(), 1u);
  EXPECT_EQ(out.memory[0].after, kSessionGiB);
}

TEST_F(KillSessionTest, UnlistedMemoryThatNeverFallsIsNotReleased) {
  pid_t child = gd::test::spawn_waiting_child(false);
  ASSERT_GT(child, 0);
  auto pid = static_cast<uint32_t>(child);
  KillPlan plan = plan_for(child, {0});
  Sample before = gpu0(7 * kSessionGiB, {pid});
  // Another process started meanwhile and holds its own 6 GiB: that growth
  // is listed, so only the ended process's 6 GiB count as not back.
  auto read_gpus = [&] { return gpu0(13 * kSessionGiB, {pid + 100000}); };
  Recorder rec;
  KillOutcome out =
      run_kill_session(plan, {}, procs_, before, test::a100_header(), read_gpus,
                       options(0.6), rec);
  EXPECT_EQ(out.result, KillResult::kNotReleased);
  EXPECT_EQ(out.exit_code(), kKillExitNotReleased);
  ASSERT_EQ(out.not_released.size(), 1u);
  EXPECT_EQ(out.not_released[0].gpu, 0);
  EXPECT_EQ(out.not_released[0].unlisted_bytes, 7 * kSessionGiB);
}

TEST_F(KillSessionTest, MemoryTheDriverKeepsIsExplained) {
  pid_t child = gd::test::spawn_waiting_child(false);
  ASSERT_GT(child, 0);
  auto pid = static_cast<uint32_t>(child);
  KillPlan plan = plan_for(child, {0});
  Sample before = gpu0(7 * kSessionGiB, {pid});
  // NVML keeps listing the exited (and reaped) pid until the timeout.
  auto read_gpus = [&] {
    waitpid(child, nullptr, 0);
    return gpu0(7 * kSessionGiB, {pid});
  };
  Recorder rec;
  KillOutcome out =
      run_kill_session(plan, {}, procs_, before, test::a100_header(), read_gpus,
                       options(0.6), rec);
  EXPECT_EQ(out.result, KillResult::kNotReleased);
  EXPECT_EQ(out.exit_code(), kKillExitNotReleased);
  ASSERT_EQ(out.not_released.size(), 1u);
  const HeldMemory& h = out.not_released[0];
  EXPECT_EQ(h.pid, pid);
  EXPECT_EQ(h.gpu, 0);
  ASSERT_EQ(h.account.processes.size(), 1u);
  EXPECT_EQ(h.account.processes[0].status, HolderStatus::kMissing);
  EXPECT_TRUE(h.gpu_users.empty());
  EXPECT_NE(h.next.find("no process holds GPU 0 any more"), std::string::npos)
      << h.next;
  EXPECT_NE(h.next.find("nvidia-smi --gpu-reset -i 0"), std::string::npos);
}

TEST_F(KillSessionTest, AProcessIgnoringTermIsReportedStillAlive) {
  pid_t child = gd::test::spawn_waiting_child(true);
  ASSERT_GT(child, 0);
  KillPlan plan = plan_for(child, {0});
  size_t reads = 0;
  auto read_gpus = [&] {
    ++reads;
    return Sample{};
  };
  Recorder rec;
  KillOutcome out =
      run_kill_session(plan, {}, procs_, Sample{}, test::a100_header(),
                       read_gpus, options(0.3), rec);
  EXPECT_EQ(out.result, KillResult::kStillAlive);
  EXPECT_EQ(out.exit_code(), kKillExitStillAlive);
  ASSERT_EQ(out.still_alive.size(), 1u);
  EXPECT_EQ(out.still_alive[0].pid, static_cast<uint32_t>(child));
  EXPECT_NE(out.still_alive[0].why.find("ignores or handles SIGTERM"),
            std::string::npos)
      << out.still_alive[0].why;
  EXPECT_NE(out.still_alive[0].why.find("--force"), std::string::npos);
  EXPECT_TRUE(rec.escalations.empty());
  EXPECT_EQ(reads, 0u) << "NVML is not re-read while the holder lives";
  EXPECT_EQ(kill(child, 0), 0) << "the child should still be running";
}

TEST_F(KillSessionTest, ForceSendsKillAfterTheTimeout) {
  pid_t child = gd::test::spawn_waiting_child(true);
  ASSERT_GT(child, 0);
  auto pid = static_cast<uint32_t>(child);
  KillPlan plan = plan_for(child, {0});
  Recorder rec;
  KillOutcome out = run_kill_session(
      plan, {}, procs_, gpu0(7 * kSessionGiB, {pid}), test::a100_header(),
      [] { return gpu0(kSessionGiB, {}); }, options(0.3, true), rec);
  EXPECT_EQ(out.result, KillResult::kReleased);
  ASSERT_EQ(rec.escalations, std::vector<size_t>{1});
  ASSERT_EQ(rec.sent.size(), 2u);
  EXPECT_EQ(rec.sent[0].sig, SIGTERM);
  EXPECT_EQ(rec.sent[1].sig, SIGKILL);
  EXPECT_EQ(rec.sent[1].pid, pid);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

TEST_F(KillSessionTest, NoGpuHolderMeansNothingToVerify) {
  pid_t child = gd::test::spawn_waiting_child(false);
  ASSERT_GT(child, 0);
  KillPlan plan = plan_for(child, {});
  size_t reads = 0;
  Recorder rec;
  KillOutcome out = run_kill_session(
      plan, {}, procs_, Sample{}, test::a100_header(),
      [&] {
        ++reads;
        return Sample{};
      },
      options(5), rec);
  EXPECT_EQ(out.result, KillResult::kNoneOnGpu);
  EXPECT_EQ(out.exit_code(), kKillExitReleased);
  EXPECT_EQ(reads, 0u);
}

}  // namespace
}  // namespace gd::procmgmt
