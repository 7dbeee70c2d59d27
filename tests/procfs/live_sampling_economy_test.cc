// ProcessTable on this machine's /proc: a data-loader worker that sleeps is
// not re-read (its run time shows it has not run), yet what it does when it
// wakes (uses CPU, exits) shows up within the promised number of samples.
// Each test runs twice: with the run time from the process's CPU clock (as
// on this machine's own /proc) and from schedstat files (as on another pid
// namespace's /proc).
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "burn_cpu.h"
#include "job_members.h"
#include "procfs/kept_file.h"
#include "procfs/process_table.h"

using gd::ProcessSample;
using gd::procfs::ProcessTable;

namespace {

const ProcessSample* find_pid(const std::vector<ProcessSample>& ps, pid_t pid) {
  auto it = std::find_if(ps.begin(), ps.end(), [&](const ProcessSample& p) {
    return p.pid == static_cast<uint32_t>(pid);
  });
  return it == ps.end() ? nullptr : &*it;
}

// A GPU-job stand-in with one worker. The worker sleeps in read(); each
// byte makes it burn 200 ms of CPU ('b') or 2 ms (any other) and answer;
// EOF makes it exit. The job never reaps it, so an exited worker stays a
// zombie. With `second_thread` the worker has two threads and the second
// one does all that while the main thread only waits (a data-loader worker
// whose queue's feeder thread runs).
struct JobWithSleepingWorker {
  pid_t job = -1, worker = -1;
  int wake_w = -1, done_r = -1;

  struct WorkerPipes {
    int wake_r, done_w;
  };
  [[noreturn]] static void serve(int wake_r, int done_w) {
    char c;
    while (read(wake_r, &c, 1) == 1) {
      gd::test::burn_cpu(c == 'b' ? 0.2 : 0.002);
      if (write(done_w, &c, 1) != 1) _exit(1);
    }
    _exit(0);
  }

  void start(bool second_thread = false) {
    int wake[2], done[2], report[2];
    ASSERT_EQ(pipe(wake), 0);
    ASSERT_EQ(pipe(done), 0);
    ASSERT_EQ(pipe(report), 0);
    job = fork();
    ASSERT_GE(job, 0);
    if (job == 0) {
      pid_t w = fork();
      if (w == 0) {
        close(wake[1]);
        close(done[0]);
        close(report[0]);
        close(report[1]);
        if (!second_thread) serve(wake[0], done[1]);
        static WorkerPipes pipes;
        pipes = {wake[0], done[1]};
        pthread_t t;
        if (pthread_create(
                &t, nullptr,
                [](void*) -> void* { serve(pipes.wake_r, pipes.done_w); },
                nullptr) != 0)
          _exit(1);
        for (;;) pause();
      }
      // Only the worker may hold the pipes, or it would never see EOF.
      close(wake[0]);
      close(wake[1]);
      close(done[0]);
      close(done[1]);
      if (write(report[1], &w, sizeof w) != sizeof w) _exit(1);
      for (;;) pause();  // never reaps the worker
    }
    close(wake[0]);
    close(done[1]);
    close(report[1]);
    wake_w = wake[1];
    done_r = done[0];
    ASSERT_EQ(read(report[0], &worker, sizeof worker),
              static_cast<ssize_t>(sizeof worker));
    close(report[0]);
    wait_until_asleep();
  }

  // On a loaded machine the worker may not have reached its read() yet
  // when sampling starts; a worker still starting is running, not asleep.
  // Asleep = state S and no CPU time gained over 50 ms, twice in a row.
  void wait_until_asleep() {
    std::string last;
    int stable = 0;
    for (int i = 0; i < 200 && stable < 2; ++i) {
      usleep(50 * 1000);
      std::string run =
          read_small("/proc/" + std::to_string(worker) + "/schedstat");
      std::string stat =
          read_small("/proc/" + std::to_string(worker) + "/stat");
      size_t paren = stat.rfind(')');
      bool sleeping =
          paren != std::string::npos && stat.compare(paren + 1, 3, " S ") == 0;
      stable = sleeping && !run.empty() && run == last ? stable + 1 : 0;
      last = run;
    }
    ASSERT_EQ(stable, 2) << "worker " << worker << " never went to sleep";
  }

  static std::string read_small(const std::string& path) {
    std::string out;
    if (FILE* f = std::fopen(path.c_str(), "r")) {
      char buf[512];
      size_t n = std::fread(buf, 1, sizeof buf, f);
      out.assign(buf, n);
      std::fclose(f);
    }
    return out;
  }

  void burn(char c = 'b') {
    ASSERT_EQ(write(wake_w, &c, 1), 1);
    ASSERT_EQ(read(done_r, &c, 1), 1);
  }

  void let_worker_exit() {
    close(wake_w);
    wake_w = -1;
    char c;
    ASSERT_EQ(read(done_r, &c, 1), 0);  // EOF: the worker's end is closed
  }

  ~JobWithSleepingWorker() {
    if (wake_w >= 0) close(wake_w);
    if (done_r >= 0) close(done_r);
    if (job > 0) {
      kill(job, SIGKILL);
      waitpid(job, nullptr, 0);
    }
  }
};

enum class RunTime { kCpuClock, kSchedstat };

std::string run_time_name(const ::testing::TestParamInfo<RunTime>& info) {
  return info.param == RunTime::kCpuClock ? "CpuClock" : "Schedstat";
}

// Where the run time comes from: the table's own choice on this machine's
// /proc is the CPU clock.
void use(RunTime source, ProcessTable& table) {
  if (source == RunTime::kSchedstat) table.set_cpu_clock({});
}

// Descriptors of this process open on some process's `file`.
size_t open_proc_files(const std::string& file) {
  size_t n = 0;
  char link[256];
  for (int fd = 0; fd < 4096; ++fd) {
    std::string path = "/proc/self/fd/" + std::to_string(fd);
    ssize_t len = readlink(path.c_str(), link, sizeof link - 1);
    if (len <= 0) continue;
    std::string target(link, static_cast<size_t>(len));
    if (target.size() > file.size() &&
        target.compare(target.size() - file.size(), file.size(), file) == 0)
      ++n;
  }
  return n;
}

class LiveSamplingEconomy : public ::testing::TestWithParam<RunTime> {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(job.start());
    root = static_cast<uint32_t>(job.job);
    use(GetParam(), table);
  }
  // One sample, one second of the table's clock after the last.
  std::vector<ProcessSample> sample() {
    return table.processes({root}, t += 1, std::nullopt);
  }
  ProcessTable::ReadCounts counts() const { return table.last_read_counts(); }
  // Samples until the worker has been found asleep often enough to be
  // checked only every 4th sample.
  void sample_until_long_asleep() {
    for (uint32_t i = 0;
         i < ProcessTable::kLongAsleepChecks + ProcessTable::kRescanSlices; ++i)
      sample();
  }

  JobWithSleepingWorker job;
  ProcessTable table{"/proc"};
  uint32_t root = 0;
  double t = 0;
};

}  // namespace

TEST_P(LiveSamplingEconomy, SleepingWorkerIsNotReReadEverySample) {
  size_t quiet_or_unchecked = 0, worker_stat_reads = 0;
  for (int i = 0; i < 20; ++i) {
    auto ps = sample();
    ASSERT_EQ(gd::test::job_size(ps, root), 2u);
    const ProcessSample* w = find_pid(ps, job.worker);
    ASSERT_NE(w, nullptr);
    EXPECT_EQ(w->state, "S");
    if (i > 0) {
      EXPECT_EQ(w->cpu_pct.value_or(-1), 0.0);
    }
    auto read = counts();
    quiet_or_unchecked += read.quiet_skips + read.unchecked;
    worker_stat_reads +=
        read.stat_reads - 1;  // the job's own is read every time
  }
  // Read twice to set up (stat, then the schedstat baseline), then at most
  // its full reads (one per kRescanSlices samples) and the odd check that
  // caught it mid-wake-up by chance.
  EXPECT_LE(worker_stat_reads, 5u);
  EXPECT_GE(quiet_or_unchecked, 15u);
}

TEST_P(LiveSamplingEconomy, LongAsleepWorkerThatWakesIsSeenWithinFourSamples) {
  sample_until_long_asleep();
  ASSERT_NO_FATAL_FAILURE(job.burn());
  // 200 ms of CPU at most 4 one-second samples late, averaged over the gap
  // since its last check: at least 200 ms / 4 s = 5% minus a clock tick.
  double seen_pct = 0;
  int samples = 0;
  while (samples < 4 && seen_pct == 0) {
    auto ps = sample();
    ++samples;
    const ProcessSample* w = find_pid(ps, job.worker);
    ASSERT_NE(w, nullptr);
    seen_pct = w->cpu_pct.value_or(0);
  }
  EXPECT_GE(seen_pct, 4.5) << "after " << samples << " samples";
  EXPECT_LE(seen_pct, 21.0);
}

TEST_P(LiveSamplingEconomy,
       LongAsleepWorkerThatExitsShowsAsZombieWithinFourSamples) {
  sample_until_long_asleep();
  ASSERT_NO_FATAL_FAILURE(job.let_worker_exit());
  // The worker closes its pipe end only by exiting; give the kernel a
  // moment to finish turning it into a zombie.
  usleep(50 * 1000);
  std::string state;
  for (int i = 0; i < 4 && state != "Z"; ++i) {
    auto ps = sample();
    const ProcessSample* w = find_pid(ps, job.worker);
    ASSERT_NE(w, nullptr) << "an unreaped worker is still listed";
    state = w->state;
  }
  EXPECT_EQ(state, "Z");
}

class LiveSamplingDescriptors : public ::testing::TestWithParam<RunTime> {};

TEST_P(LiveSamplingDescriptors, OfExitedProcessesAreClosed) {
  size_t before = gd::procfs::kept_file_count();
  {
    JobWithSleepingWorker job;
    ASSERT_NO_FATAL_FAILURE(job.start());
    ProcessTable table("/proc");
    use(GetParam(), table);
    uint32_t root = static_cast<uint32_t>(job.job);
    double t = 0;
    for (int i = 0; i < 3; ++i) table.processes({root}, t += 1, std::nullopt);
    // Job: stat + children; worker: stat, and schedstat without a clock.
    EXPECT_EQ(gd::procfs::kept_file_count(),
              before + (GetParam() == RunTime::kCpuClock ? 3 : 4));
    kill(job.worker, SIGKILL);
    kill(job.job, SIGKILL);
    waitpid(job.job, nullptr, 0);
    job.job = -1;
    usleep(50 * 1000);  // init reaps the orphaned worker
    auto ps = table.processes({root}, t += 1, std::nullopt);
    ASSERT_EQ(ps.size(), 1u);
    EXPECT_EQ(ps[0].state, "missing");
    EXPECT_EQ(gd::procfs::kept_file_count(), before)
        << "nothing held for gone processes";
  }
  EXPECT_EQ(gd::procfs::kept_file_count(), before);
}

TEST_P(LiveSamplingEconomy, WorkerThatStopsRunningStopsBeingReRead) {
  // Running at every check: looked at every sample (schedstat, and stat
  // every kActiveStatEvery samples).
  for (uint32_t i = 0; i < 2 * ProcessTable::kActiveStatEvery; ++i) {
    ASSERT_NO_FATAL_FAILURE(job.burn());
    auto ps = sample();
    EXPECT_EQ(counts().quiet_skips + counts().unchecked, 0u)
        << "a worker that ran since the last sample must be read";
    const ProcessSample* w = find_pid(ps, job.worker);
    ASSERT_NE(w, nullptr);
  }
  // Asleep from now on: found so within two active-check periods.
  uint32_t samples = 0;
  for (; samples < 2 * ProcessTable::kActiveStatEvery + 2; ++samples) {
    sample();
    if (counts().quiet_skips > 0) break;
  }
  EXPECT_LT(samples, 2 * ProcessTable::kActiveStatEvery + 2)
      << "never found asleep";
}

// The worst case of a busy training node: every worker runs between any two
// samples. Its stat is not re-read every sample (schedstat is, a third of
// the cost), yet its CPU% is right every sample.
TEST_P(LiveSamplingEconomy, BusyWorkerIsReadFromSchedstatWithItsStatEveryFew) {
  ASSERT_NO_FATAL_FAILURE(job.burn());
  sample();
  ASSERT_NO_FATAL_FAILURE(job.burn());
  sample();  // now known to be running
  const uint32_t n = 3 * ProcessTable::kActiveStatEvery;
  size_t worker_stat_reads = 0, sched_only = 0;
  for (uint32_t i = 0; i < n; ++i) {
    ASSERT_NO_FATAL_FAILURE(job.burn());  // 200 ms of CPU per 1 s sample
    auto ps = sample();
    worker_stat_reads += counts().stat_reads - 1;  // the job's own
    sched_only += counts().sched_only;
    const ProcessSample* w = find_pid(ps, job.worker);
    ASSERT_NE(w, nullptr);
    ASSERT_TRUE(w->cpu_pct);
    EXPECT_GE(*w->cpu_pct, 19.5) << "sample " << i;
    EXPECT_LE(*w->cpu_pct, 25.0) << "sample " << i;
    EXPECT_EQ(w->threads.value_or(0), 1);
  }
  // One stat read per kActiveStatEvery samples (its full read).
  EXPECT_LE(worker_stat_reads, n / ProcessTable::kActiveStatEvery + 2);
  EXPECT_GE(sched_only, n - n / ProcessTable::kActiveStatEvery - 2);
}

// A worker that runs every second but lightly (2 ms of CPU per 1 s sample):
// read every 2nd sample, its CPU% right on every one; once it gets busy it
// is read every sample again.
TEST_P(LiveSamplingEconomy, LightlyRunningWorkerIsReadEveryOtherSample) {
  for (int i = 0; i < 3; ++i) {
    ASSERT_NO_FATAL_FAILURE(job.burn('s'));
    sample();
  }
  const uint32_t n = 2 * ProcessTable::kRescanSlices;
  size_t light_skips = 0, checks = 0;
  for (uint32_t i = 0; i < n; ++i) {
    ASSERT_NO_FATAL_FAILURE(job.burn('s'));
    auto ps = sample();
    light_skips += counts().light_skips;
    checks += counts().sched_only;
    const ProcessSample* w = find_pid(ps, job.worker);
    ASSERT_NE(w, nullptr);
    ASSERT_TRUE(w->cpu_pct) << "sample " << i;
    // 0.2% of a core, plus what burn_cpu's clock reads add.
    EXPECT_GE(*w->cpu_pct, 0.19) << "sample " << i;
    EXPECT_LT(*w->cpu_pct, ProcessTable::kLightCpuPct) << "sample " << i;
  }
  // Every other sample, but for full reads (every kRescanSlices).
  EXPECT_GE(light_skips, n / 2 - 2);
  EXPECT_LE(light_skips, n / 2);
  EXPECT_GE(checks, n / 2 - 2);
  // Busy from now on: seen so within two samples, then read every sample.
  ASSERT_NO_FATAL_FAILURE(job.burn());
  double cpu = 0;
  for (int i = 0; i < 2 && cpu < 9.5; ++i) {
    if (i > 0) {
      ASSERT_NO_FATAL_FAILURE(job.burn());
    }
    auto ps = sample();
    cpu = find_pid(ps, job.worker)->cpu_pct.value_or(0);
  }
  EXPECT_GE(cpu, 9.5) << "200 ms over one or two 1 s samples";
  for (int i = 0; i < 4; ++i) {
    ASSERT_NO_FATAL_FAILURE(job.burn());
    sample();
    EXPECT_EQ(counts().light_skips, 0u);
  }
}

TEST_P(LiveSamplingEconomy, BusyWorkerThatExitsIsAZombieWithinTwoSamples) {
  for (int i = 0; i < 4; ++i) {
    ASSERT_NO_FATAL_FAILURE(job.burn());
    sample();
  }
  ASSERT_NO_FATAL_FAILURE(job.let_worker_exit());
  usleep(50 * 1000);
  std::string state;
  for (int i = 0; i < 2 && state != "Z"; ++i) {
    auto ps = sample();
    const ProcessSample* w = find_pid(ps, job.worker);
    ASSERT_NE(w, nullptr);
    state = w->state;
  }
  EXPECT_EQ(state, "Z");
}

// What a sleeping worker's checks read: its CPU clock, one system call, and
// no schedstat file kept open for it; or its schedstat file.
TEST_P(LiveSamplingEconomy, RunTimeIsReadFromTheClockWhereThereIsOne) {
  size_t clock_reads = 0, schedstat_reads = 0;
  for (int i = 0; i < 6; ++i) {
    sample();
    clock_reads += counts().clock_reads;
    schedstat_reads += counts().schedstat_reads;
  }
  if (GetParam() == RunTime::kCpuClock) {
    EXPECT_GE(clock_reads, 4u);
    EXPECT_EQ(schedstat_reads, 0u);
    EXPECT_EQ(open_proc_files("/schedstat"), 0u);
  } else {
    EXPECT_EQ(clock_reads, 0u);
    EXPECT_GE(schedstat_reads, 4u);
    EXPECT_EQ(open_proc_files("/schedstat"), 1u);
  }
}

INSTANTIATE_TEST_SUITE_P(RunTime, LiveSamplingEconomy,
                         ::testing::Values(RunTime::kCpuClock,
                                           RunTime::kSchedstat),
                         run_time_name);
INSTANTIATE_TEST_SUITE_P(RunTime, LiveSamplingDescriptors,
                         ::testing::Values(RunTime::kCpuClock,
                                           RunTime::kSchedstat),
                         run_time_name);

// A CPU clock is read by pid. Once the kernel's pid counter has wrapped (the
// last pid went back) a sleeping worker's pid might be another process's:
// its stat is read through the descriptor that pins it, once, and its
// checks go back to the clock alone after that.
TEST(LiveSamplingClock, AfterThePidCounterWrapsASleeperIsReadThroughItsStat) {
  JobWithSleepingWorker job;
  ASSERT_NO_FATAL_FAILURE(job.start());
  ProcessTable table("/proc");
  uint64_t last_pid = 1000;
  table.set_last_pid_source([&] { return std::optional<uint64_t>(last_pid); });
  const uint32_t root = static_cast<uint32_t>(job.job);
  double t = 0;
  auto worker_stat_read = [&] {
    table.processes({root}, t += 1, std::nullopt);
    return table.last_read_counts().stat_reads - 1;  // the job's own
  };
  // Samples until three in a row read nothing of the worker but its clock
  // (or nothing at all: long asleep, it is checked every 4th sample).
  auto three_quiet_samples = [&] {
    for (int quiet = 0, i = 0; i < 40; ++i) {
      last_pid += 3;
      const size_t read = worker_stat_read();
      const auto c = table.last_read_counts();
      const bool by_clock = c.quiet_skips == 1 && c.clock_reads == 1;
      quiet = read == 0 && (by_clock || c.unchecked == 1) ? quiet + 1 : 0;
      if (quiet == 3) return true;
    }
    return false;
  };
  ASSERT_TRUE(three_quiet_samples()) << "never checked by its clock alone";
  last_pid = 300;  // wrapped: the counter starts again above the reserved
  EXPECT_EQ(worker_stat_read(), 1u) << "its stat is read at once";
  EXPECT_EQ(table.last_read_counts().schedstat_reads, 0u);
  // Pinned again by that read: its checks are the clock's alone.
  EXPECT_TRUE(three_quiet_samples());
}

// A worker of two threads whose second one does the work: with a CPU clock
// (every thread's run time) it is checked as a single-threaded one is,
// asleep or busy, and its CPU% counts the second thread; from schedstat
// (the main thread's alone) its stat is read every sample.
class LiveSamplingThreaded : public LiveSamplingEconomy {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(job.start(/*second_thread=*/true));
    root = static_cast<uint32_t>(job.job);
    use(GetParam(), table);
  }
};

TEST_P(LiveSamplingThreaded, AsleepOrBusyItIsReadAsItsRunTimeAllows) {
  const bool clock = GetParam() == RunTime::kCpuClock;
  size_t skipped = 0, worker_stat_reads = 0;
  for (int i = 0; i < 20; ++i) {
    auto ps = sample();
    const ProcessSample* w = find_pid(ps, job.worker);
    ASSERT_NE(w, nullptr);
    EXPECT_EQ(w->threads.value_or(0), 2);
    skipped += counts().quiet_skips + counts().unchecked;
    worker_stat_reads += counts().stat_reads - 1;  // the job's own
  }
  if (clock) {
    EXPECT_LE(worker_stat_reads, 5u);
    EXPECT_GE(skipped, 15u);
  } else {
    EXPECT_EQ(worker_stat_reads, 20u);
    EXPECT_EQ(skipped, 0u);
  }
  worker_stat_reads = 0;
  for (uint32_t i = 0; i < ProcessTable::kActiveStatEvery + 5; ++i) {
    ASSERT_NO_FATAL_FAILURE(job.burn());  // 200 ms on the second thread
    auto ps = sample();
    worker_stat_reads += counts().stat_reads - 1;
    // Long asleep, it is seen running within 4 samples (its first CPU% the
    // gap's average); from then on each sample's CPU% is that second's.
    if (i < 5) continue;
    const ProcessSample* w = find_pid(ps, job.worker);
    ASSERT_NE(w, nullptr);
    ASSERT_TRUE(w->cpu_pct) << "sample " << i;
    // Ticks (without a clock) are 10 ms: 200 ms +- one.
    EXPECT_GE(*w->cpu_pct, 19.0) << "sample " << i;
    EXPECT_LE(*w->cpu_pct, 25.0) << "sample " << i;
  }
  if (clock) {
    EXPECT_LE(worker_stat_reads, 5u) << "stat at its full read, not each";
  } else {
    EXPECT_EQ(worker_stat_reads, ProcessTable::kActiveStatEvery + 5);
  }
}

INSTANTIATE_TEST_SUITE_P(RunTime, LiveSamplingThreaded,
                         ::testing::Values(RunTime::kCpuClock,
                                           RunTime::kSchedstat),
                         run_time_name);
