// `k` in top goes through procmgmt's kill plan and session: a real child
// process listed on a GPU is planned, waits for the yes, is ended, and the
// memory check runs; PID 1 and a process NVML does not list are refused.
// With --connect the same happens through a serve (an in-process
// HttpServer with remote kill on, basic auth), and serve's refusals come
// back as one line with its reason.
#include "monitor/kill_job.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "monitor/remote_kill.h"
#include "procmgmt/waiting_child.h"
#include "serve/http_server.h"
#include "top_fixture.h"

namespace gd::monitor {
namespace {

using namespace gd::top::test;
using Stage = KillJob::Stage;

// A sample listing `pid` with 8 GiB on GPU 0 while `listed` is true; the
// GPU's used memory falls by those 8 GiB when it is not.
Sample gpu_sample(uint32_t pid, bool listed) {
  Sample s;
  s.t = kT0;
  auto g = gpu(0, 50, (listed ? 10 : 2) * kGiB);
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
  pid_t child = gd::test::spawn_waiting_child();
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
  pid_t bystander = gd::test::spawn_waiting_child();
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

// bcrypt of "s3cret pass" (cost 4).
constexpr const char* kHash =
    "$2b$04$abcdefghijklmnopqrstuuoBpIrM0OnplXjsOI8DWYJTHUhJDuUv.";

// A serve's HTTP side with basic auth; remote kill on when `kill_on`, with
// NVML listing `child` on GPU 0 while `listed` is true.
// A child, listed on GPU 0 until it is reaped (as the driver frees the
// memory of a process that ended).
struct ListedChild {
  explicit ListedChild(bool ignore_term = false)
      : pid(gd::test::spawn_waiting_child(ignore_term)), reaper([this] {
          waitpid(pid, nullptr, 0);
          listed = false;
        }) {}
  ~ListedChild() {
    if (listed) kill(pid, SIGKILL);  // a test that failed before its kill
    reaper.join();
  }
  pid_t pid;
  std::atomic<bool> listed{true};
  std::thread reaper;
};

class RemoteServe {
 public:
  RemoteServe(bool kill_on, const std::atomic<bool>* listed, pid_t child)
      : box_(std::make_shared<Snapshot>()), http_(box_, nullptr) {
    WebConfig web;
    web.basic_auth_users = {{"ops", kHash}};
    http_.use_web_config(web);
    if (kill_on) {
      KillApiConfig c;
      c.enabled = true;
      c.fresh_sample = [listed, child] {
        return std::make_shared<const Sample>(
            gpu_sample(static_cast<uint32_t>(child), listed && *listed));
      };
      http_.enable_kill(c);
    }
    http_.bind("127.0.0.1", 0);
    http_.start();
  }
  ~RemoteServe() { http_.stop(); }
  RemoteOptions connection(std::string password = "s3cret pass") const {
    RemoteOptions o;
    o.url = "http://127.0.0.1:" + std::to_string(http_.port());
    o.who.user = "ops";
    o.who.password = std::move(password);
    return o;
  }

 private:
  SnapshotBox box_;
  HttpServer http_;
};

TEST(RemoteKillJob, ServePlansAsksThenEndsTheProcessAndChecksTheMemory) {
  ListedChild listed_child;
  const pid_t child = listed_child.pid;
  RemoteServe serve(true, &listed_child.listed, child);
  KillJobOptions o;
  o.timeout_s = 3;
  KillJob job({static_cast<uint32_t>(child)},
              remote_kill_backend(serve.connection()), o, [] {});
  ASSERT_TRUE(wait_stage(job, Stage::kPlanned)) << job.error();
  EXPECT_EQ(job.where(), serve.connection().url);
  EXPECT_TRUE(job.can_proceed());
  ASSERT_EQ(job.plan().targets.size(), 1u);
  EXPECT_EQ(job.plan().targets[0].proc.pid, static_cast<uint32_t>(child));
  ASSERT_EQ(job.before().gpus.size(), 1u);  // the GPU-MEM column's source
  EXPECT_EQ(job.before().gpus[0].processes->at(0).used_bytes, 8 * kGiB);
  EXPECT_EQ(kill(child, 0), 0) << "nothing is sent before the yes";
  job.confirm();
  ASSERT_TRUE(wait_stage(job, Stage::kDone)) << job.error();
  EXPECT_EQ(job.outcome().result, procmgmt::KillResult::kReleased);
  ASSERT_EQ(job.outcome().memory.size(), 1u);
  auto steps = job.steps();
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].pid, static_cast<uint32_t>(child));
  EXPECT_EQ(steps[0].sig, SIGTERM);
  EXPECT_TRUE(steps[0].error.empty());
}

// The screen shows each step as serve takes it: TERM sent while serve still
// waits for a process that ignores it, then the escalation and KILL.
TEST(RemoteKillJob, StepsShowWhileServeIsStillWaiting) {
  ListedChild listed_child(/*ignore_term=*/true);
  const pid_t child = listed_child.pid;
  ASSERT_GT(child, 0);
  RemoteServe serve(true, &listed_child.listed, child);
  KillJobOptions o;
  o.timeout_s = 2;
  KillJob job({static_cast<uint32_t>(child)},
              remote_kill_backend(serve.connection()), o, [] {});
  ASSERT_TRUE(wait_stage(job, Stage::kPlanned)) << job.error();
  job.confirm(/*force=*/true);  // `f`: KILL after the wait
  std::vector<KillStep> while_running;
  for (int i = 0; i < 1000 && job.stage() == Stage::kRunning; ++i) {
    while_running = job.steps();
    if (!while_running.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(job.stage(), Stage::kRunning)
      << "the TERM step came only with the outcome";
  ASSERT_EQ(while_running.size(), 1u);
  EXPECT_EQ(while_running[0].sig, SIGTERM);
  ASSERT_TRUE(wait_stage(job, Stage::kDone)) << job.error();
  auto steps = job.steps();
  ASSERT_EQ(steps.size(), 3u) << "TERM, the escalation, KILL; each once";
  EXPECT_TRUE(steps[1].escalation);
  EXPECT_EQ(steps[2].sig, SIGKILL);
  EXPECT_EQ(job.outcome().result, procmgmt::KillResult::kReleased);
}

// A plain yes (`y`) is `gpudoctor kill` without --force: SIGTERM only, and a
// process that ignores it is reported alive, never sent SIGKILL.
TEST(RemoteKillJob, AYesWithoutForceSendsNoKill) {
  ListedChild listed_child(/*ignore_term=*/true);
  const pid_t child = listed_child.pid;
  ASSERT_GT(child, 0);
  RemoteServe serve(true, &listed_child.listed, child);
  KillJobOptions o;
  o.timeout_s = 1;
  KillJob job({static_cast<uint32_t>(child)},
              remote_kill_backend(serve.connection()), o, [] {});
  ASSERT_TRUE(wait_stage(job, Stage::kPlanned)) << job.error();
  job.confirm();
  ASSERT_TRUE(wait_stage(job, Stage::kDone)) << job.error();
  const auto steps = job.steps();
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].sig, SIGTERM);
  EXPECT_FALSE(job.options().force);
  EXPECT_EQ(job.outcome().result, procmgmt::KillResult::kStillAlive);
  EXPECT_EQ(kill(child, 0), 0) << "the process got more than SIGTERM";
}

TEST(RemoteKillJob, RefusalsOfThePlanComeBackWithTheCommand) {
  std::atomic<bool> listed{false};
  RemoteServe serve(true, &listed, 0);
  KillJob job({1}, remote_kill_backend(serve.connection()), {}, [] {});
  ASSERT_TRUE(wait_stage(job, Stage::kPlanned)) << job.error();
  EXPECT_FALSE(job.can_proceed());
  ASSERT_EQ(job.plan().refusals.size(), 1u);
  EXPECT_EQ(job.plan().refusals[0].reason, "PID 1 (init) is never signalled");
  const procmgmt::ProcEntry* init = job.procs().find(1);
  ASSERT_NE(init, nullptr);
  EXPECT_FALSE(init->command().empty());
}

TEST(RemoteKillJob, ServesRefusalIsOneLineWithItsReason) {
  {
    RemoteServe off(false, nullptr, 0);
    KillJob job({1}, remote_kill_backend(off.connection()), {}, [] {});
    ASSERT_TRUE(wait_stage(job, Stage::kFailed));
    EXPECT_EQ(job.error().rfind("serve refused (HTTP 403): remote kill is off "
                                "on this serve: start it with "
                                "--allow-remote-kill",
                                0),
              0u)
        << job.error();
    EXPECT_EQ(job.error().find('\n'), std::string::npos);
  }
  RemoteServe on(true, nullptr, 0);
  KillJob job({1}, remote_kill_backend(on.connection("wrong")), {}, [] {});
  ASSERT_TRUE(wait_stage(job, Stage::kFailed));
  EXPECT_EQ(job.error(),
            "serve refused (HTTP 401): authentication required (check "
            "--auth-file)");
}

}  // namespace
}  // namespace gd::monitor
