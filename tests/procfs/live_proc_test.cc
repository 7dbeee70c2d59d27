// HostSource on this machine's real /proc: processes we fork ourselves.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "burn_cpu.h"
#include "job_members.h"
#include "procfs/host_source.h"

using gd::HostSource;
using gd::ProcessSample;

namespace {

double wall_now() {
  return std::chrono::duration<double>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

const ProcessSample* find_live_pid(const std::vector<ProcessSample>& ps,
                                   uint32_t pid) {
  auto it = std::find_if(ps.begin(), ps.end(),
                         [&](const ProcessSample& p) { return p.pid == pid; });
  return it == ps.end() ? nullptr : &*it;
}

void write_all(int fd, const void* p, size_t n) {
  ASSERT_EQ(write(fd, p, n), static_cast<ssize_t>(n));
}

bool read_all(int fd, void* p, size_t n) {
  return read(fd, p, n) == static_cast<ssize_t>(n);
}

// A child that forks two idle workers, then burns 300 ms of CPU on command.
// Pipes: `cmd` (test -> child; EOF means "exit"), `stop` (test -> workers,
// EOF only), `report` (child -> test).
struct JobWithWorkers {
  pid_t child = -1;
  pid_t workers[2] = {-1, -1};
  int cmd_w = -1, stop_w = -1, report_r = -1;

  void start() {
    int cmd[2], stop[2], report[2];
    ASSERT_EQ(pipe(cmd), 0);
    ASSERT_EQ(pipe(stop), 0);
    ASSERT_EQ(pipe(report), 0);
    child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      close(cmd[1]);
      close(stop[1]);
      close(report[0]);
      pid_t w[2];
      for (pid_t& wp : w) {
        wp = fork();
        if (wp == 0) {  // worker: idle until the test closes the stop pipe
          close(cmd[0]);
          char c;
          while (read(stop[0], &c, 1) > 0) {
          }
          _exit(0);
        }
      }
      close(stop[0]);
      if (write(report[1], w, sizeof w) != sizeof w) _exit(1);
      char c;
      while (read(cmd[0], &c, 1) == 1) {
        gd::test::burn_cpu(0.3);
        if (write(report[1], &c, 1) != 1) _exit(1);
      }
      for (pid_t wp : w) waitpid(wp, nullptr, 0);
      _exit(0);
    }
    close(cmd[0]);
    close(stop[0]);
    close(report[1]);
    cmd_w = cmd[1];
    stop_w = stop[1];
    report_r = report[0];
    ASSERT_TRUE(read_all(report_r, workers, sizeof workers));
  }

  void burn() {
    char c = 'b';
    write_all(cmd_w, &c, 1);
    ASSERT_TRUE(read_all(report_r, &c, 1));
  }

  ~JobWithWorkers() {
    if (cmd_w >= 0) close(cmd_w);
    if (stop_w >= 0) close(stop_w);
    if (child > 0) waitpid(child, nullptr, 0);
    if (report_r >= 0) close(report_r);
  }
};

}  // namespace

TEST(LiveHost, HostInfoMatchesThisMachine) {
  HostSource c;
  gd::HostInfo h = c.host_info();
  ASSERT_TRUE(h.cpu_count);
  unsigned hc = std::thread::hardware_concurrency();
  if (hc > 0) {
    EXPECT_GE(*h.cpu_count, static_cast<int>(hc));
  }
  EXPECT_LE(*h.cpu_count, 4096);
  ASSERT_TRUE(h.mem_total_bytes);
  EXPECT_GT(*h.mem_total_bytes, 0u);
  utsname u{};
  ASSERT_EQ(uname(&u), 0);
  EXPECT_EQ(h.kernel, u.release);
  EXPECT_EQ(h.hostname, u.nodename);
  EXPECT_TRUE(h.pid_namespace == "host" || h.pid_namespace == "container");
}

TEST(LiveHost, SecondSampleHasCpuUtilisationInRange) {
  HostSource c;
  c.sample(wall_now());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  gd::HostSample s = c.sample(wall_now());
  ASSERT_TRUE(s.cpu_util_pct);
  EXPECT_GE(*s.cpu_util_pct, 0.0);
  EXPECT_LE(*s.cpu_util_pct, 100.0);
  ASSERT_TRUE(s.mem_available_bytes);
  EXPECT_GT(*s.mem_available_bytes, 0u);
}

TEST(LiveProcesses, ForkedJobListsChildAndBothWorkersWithCpuPct) {
  JobWithWorkers job;
  ASSERT_NO_FATAL_FAILURE(job.start());
  HostSource c;
  const uint32_t child = static_cast<uint32_t>(job.child);

  double t0 = wall_now();
  auto first = c.processes({child}, t0);
  ASSERT_NE(find_live_pid(first, child), nullptr);
  ASSERT_NO_FATAL_FAILURE(job.burn());
  double t1 = wall_now();
  auto second = c.processes({child}, t1);

  for (const auto* ps : {&first, &second}) {
    ASSERT_EQ(gd::test::job_size(*ps, child), 3u);
    EXPECT_EQ(find_live_pid(*ps, child)->ppid, static_cast<uint32_t>(getpid()));
    // Its parent (this test, neither a shell nor a launcher) is listed as
    // the ancestor that tells which job it belongs to.
    const ProcessSample* parent =
        find_live_pid(*ps, static_cast<uint32_t>(getpid()));
    ASSERT_NE(parent, nullptr);
    EXPECT_FALSE(parent->cmdline.empty());
    EXPECT_TRUE(parent->libs.empty()) << "an ancestor's maps is not read";
    for (pid_t w : job.workers) {
      const ProcessSample* wp = find_live_pid(*ps, static_cast<uint32_t>(w));
      ASSERT_NE(wp, nullptr) << "worker " << w;
      EXPECT_EQ(wp->ppid, child);
    }
  }
  const ProcessSample* p = find_live_pid(second, child);
  ASSERT_TRUE(p->cpu_pct);
  // The child used 0.3 s of CPU between the calls (clock ticks are 10 ms).
  double cpu_seconds = *p->cpu_pct / 100.0 * (t1 - t0);
  EXPECT_GT(cpu_seconds, 0.27);
  EXPECT_LT(cpu_seconds, 0.40);
  for (pid_t w : job.workers) {
    const ProcessSample* wp = find_live_pid(second, static_cast<uint32_t>(w));
    ASSERT_TRUE(wp->cpu_pct);
    EXPECT_LT(*wp->cpu_pct, 10.0) << "idle worker";
  }
  EXPECT_FALSE(p->cmdline.empty());
  ASSERT_TRUE(p->start_time);
  EXPECT_NEAR(*p->start_time, t0, 30.0);
}

TEST(LiveProcesses, ExitedPidIsMissing) {
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) _exit(0);
  ASSERT_EQ(waitpid(pid, nullptr, 0), pid);
  ASSERT_NE(kill(pid, 0), 0);  // really gone
  HostSource c;
  auto ps = c.processes({static_cast<uint32_t>(pid)}, wall_now());
  ASSERT_EQ(ps.size(), 1u);
  EXPECT_EQ(ps[0].state, "missing");
}

TEST(LiveProcesses, UnreapedChildIsZombie) {
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) _exit(0);
  HostSource c;
  std::vector<ProcessSample> ps;
  // The child becomes a zombie as soon as it has exited; give it a moment.
  for (int i = 0; i < 200; ++i) {
    ps = c.processes({static_cast<uint32_t>(pid)}, wall_now());
    const ProcessSample* z = find_live_pid(ps, static_cast<uint32_t>(pid));
    if (z && z->state == "Z") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(gd::test::job_size(ps, static_cast<uint32_t>(pid)), 1u);
  const ProcessSample* z = find_live_pid(ps, static_cast<uint32_t>(pid));
  EXPECT_EQ(z->state, "Z");
  EXPECT_EQ(z->ppid, static_cast<uint32_t>(getpid()));
  waitpid(pid, nullptr, 0);
}
