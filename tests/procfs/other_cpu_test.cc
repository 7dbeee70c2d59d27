// OtherCpuScan (host.other_cpu_top): over a hand-made /proc tree, who counts
// as other work and what each reading reads; over the live /proc, real busy
// processes started by the test.
#include "procfs/other_cpu.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "burn_cpu.h"
#include "procfs/host_source.h"

using gd::OtherCpuProcess;
using gd::ProcessSample;
using gd::procfs::OtherCpuScan;

namespace {

const double kTck = static_cast<double>(sysconf(_SC_CLK_TCK));

// A /proc of our own: pid directories with stat, status and cgroup.
class FakeProc {
 public:
  FakeProc() {
    char tmpl[] = "/tmp/gd_other_cpu_XXXXXX";
    root_ = mkdtemp(tmpl);
  }
  ~FakeProc() { std::filesystem::remove_all(root_); }
  const std::string& root() const { return root_; }

  // A process that has used `ticks` of CPU; started `start` ticks after boot.
  void put(uint32_t pid, const std::string& comm, uint32_t ppid, uint64_t ticks,
           uint64_t start = 100, uint32_t uid = 0,
           const std::string& cgroup = "/user.slice") const {
    std::string dir = root_ + "/" + std::to_string(pid);
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/stat")
        << pid << " (" << comm << ") R " << ppid << " 1 1 0 -1 4194560 1000 0 "
        << "5 0 " << ticks << " 0 0 0 20 0 1 0 " << start
        << " 123456789 100 18446744073709551615 1 1 0\n";
    std::ofstream(dir + "/status")
        << "Name:\t" << comm << "\nUid:\t" << uid << "\t" << uid << "\t" << uid
        << "\t" << uid << "\n";
    std::ofstream(dir + "/cgroup") << "0::" << cgroup << "\n";
  }
  // /proc/loadavg, whose last field is the last pid the kernel handed out.
  void set_last_pid(uint64_t pid) const {
    std::ofstream(root_ + "/loadavg") << "0.10 0.20 0.30 1/99 " << pid << "\n";
  }
  void remove(uint32_t pid) const {
    std::filesystem::remove_all(root_ + "/" + std::to_string(pid));
  }

 private:
  std::string root_;
};

ProcessSample listed(uint32_t pid, uint32_t ppid) {
  ProcessSample p;
  p.pid = pid;
  p.ppid = ppid;
  return p;
}

std::vector<uint32_t> pids(const std::vector<OtherCpuProcess>& top) {
  std::vector<uint32_t> out;
  for (const auto& p : top) out.push_back(p.pid);
  return out;
}

// The shape: init <- sshd <- bash (launcher) <- python (GPU) <-
// worker <- its own child (not yet listed by the process table); bash also
// started `yes` beside the job; an ffmpeg in a container; an idle daemon.
// Everything but the idle daemon burns CPU between the two readings.
void put_host(const FakeProc& proc, uint64_t extra) {
  proc.put(1, "systemd", 0, 100 + extra);
  proc.put(10, "sshd", 1, 100 + extra);
  proc.put(20, "bash", 10, 100 + extra);
  proc.put(30, "python", 20, 1000 + extra);
  proc.put(31, "pt_data_worker", 30, 1000 + extra);
  proc.put(32, "pt_data_worker", 31, 1000 + extra);
  proc.put(40, "yes", 20, 500 + extra / 2, 100, 0);
  proc.put(50, "ffmpeg", 1, 700 + extra * 8 / 10, 100, 0,
           "/system.slice/docker-"
           "3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d"
           ".scope");
  proc.put(60, "cron", 1, 5);
}

TEST(OtherCpuScan, NamesOnlyTheWorkOutsideEveryGpuJobBusiestFirst) {
  FakeProc proc;
  put_host(proc, 0);
  OtherCpuScan scan(proc.root());
  const std::vector<ProcessSample> table = {listed(20, 10), listed(30, 20),
                                            listed(31, 30)};
  scan.read(1000.0, std::nullopt);
  scan.set_jobs({30}, table);
  EXPECT_FALSE(scan.top().has_value()) << "one reading: no rate";

  // One second later, `extra` ticks more: extra / kTck CPUs.
  const uint64_t extra = static_cast<uint64_t>(kTck);
  put_host(proc, extra);
  scan.read(1001.0, std::nullopt);
  auto top = scan.top();
  ASSERT_TRUE(top.has_value());
  // Not the GPU process (30), its worker (31) or the worker's child that the
  // table has not listed (32), not its shell (20), sshd (10) or init (1):
  // ffmpeg at 80% and yes at 50%, busiest first. cron did not run.
  ASSERT_EQ(pids(*top), (std::vector<uint32_t>{50, 40}));
  EXPECT_EQ((*top)[0].comm, "ffmpeg");
  EXPECT_EQ((*top)[0].user, "root");
  EXPECT_EQ((*top)[0].container, "docker:3c4d5e6f7a8b");
  EXPECT_NEAR((*top)[0].cpu_pct, 80.0, 1.0);
  EXPECT_EQ((*top)[1].comm, "yes");
  EXPECT_FALSE((*top)[1].container.has_value());
  EXPECT_NEAR((*top)[1].cpu_pct, 50.0, 1.0);
}

// What could be other work and its relatives (status's text looks for
// device holders among them only): the busy processes outside the jobs, their
// ancestors and their descendants; not the jobs' own, not the idle
// unrelated ones.
TEST(OtherCpuScan, BusyFamiliesAreTheBusyOutsideTheJobsAndTheirRelatives) {
  FakeProc proc;
  put_host(proc, 0);
  proc.put(51, "ffmpeg_child", 50, 5);  // idle, below the busy ffmpeg
  OtherCpuScan scan(proc.root());
  const std::vector<ProcessSample> table = {listed(20, 10), listed(30, 20),
                                            listed(31, 30)};
  scan.read(1000.0, std::nullopt);
  scan.set_jobs({30}, table);
  EXPECT_TRUE(scan.busy_families().empty()) << "one reading: none busy yet";
  put_host(proc, static_cast<uint64_t>(kTck));
  scan.read(1001.0, std::nullopt);
  // Busy outside the jobs: 32 (the worker's child the table has not
  // listed), 40 (yes), 50 (ffmpeg); their ancestors 31, 30, 20, 10, 1; 51
  // below ffmpeg. Not cron (60): idle, no busy relative.
  EXPECT_EQ(scan.busy_families(),
            (std::vector<uint32_t>{1, 10, 20, 30, 31, 32, 40, 50, 51}));
  auto top = scan.top();
  ASSERT_TRUE(top.has_value());
  EXPECT_EQ(pids(*top), (std::vector<uint32_t>{50, 40}));
}

TEST(OtherCpuScan, NoneBusyIsAnEmptyListAndTheListIsBounded) {
  FakeProc proc;
  for (uint32_t pid = 100; pid < 120; ++pid) proc.put(pid, "idle", 1, 10);
  OtherCpuScan idle(proc.root());
  idle.read(10.0, std::nullopt);
  idle.read(11.0, std::nullopt);
  auto top = idle.top();
  ASSERT_TRUE(top.has_value());
  EXPECT_TRUE(top->empty()) << "looked, nothing busy: []";

  // pid 100 uses one CPU, 101 two, ... 119 twenty.
  OtherCpuScan busy(proc.root());
  for (uint64_t k = 1; k <= 2; ++k) {
    for (uint32_t pid = 100; pid < 120; ++pid)
      proc.put(pid, "busy", 1, static_cast<uint64_t>(kTck) * (pid - 99) * k);
    busy.read(static_cast<double>(10 + k), std::nullopt);
  }
  top = busy.top();
  ASSERT_TRUE(top.has_value());
  ASSERT_EQ(top->size(), gd::kOtherCpuTopMax);
  EXPECT_EQ(top->front().pid, 119u);
  EXPECT_NEAR(top->front().cpu_pct, 2000.0, 1.0);
  EXPECT_EQ(top->back().pid, 112u);
}

TEST(OtherCpuScan, ReadsIdleProcessesOncePerSliceRoundAndTheBusyAtListings) {
  FakeProc proc;
  constexpr uint32_t kIdle = 320;
  for (uint32_t pid = 1000; pid < 1000 + kIdle; ++pid)
    proc.put(pid, "idle", 1, 10);
  proc.put(5000, "busy", 1, 0);
  OtherCpuScan scan(proc.root());
  double t = 100;
  uint64_t busy = 0;
  for (int i = 0; i < 4; ++i) {  // warm up: two full readings, then slices
    proc.put(5000, "busy", 1, busy += static_cast<uint64_t>(kTck));
    scan.read(t += 1, std::nullopt);
    scan.top();
  }
  size_t reads = 0, listed = 0;
  for (uint32_t i = 0; i < OtherCpuScan::kSlices; ++i) {
    proc.put(5000, "busy", 1, busy += static_cast<uint64_t>(kTck));
    scan.read(t += 1, std::nullopt);
    auto top = scan.top();
    ASSERT_TRUE(top && top->size() == 1);
    EXPECT_NEAR(top->front().cpu_pct, 100.0, 1.0);
    reads += scan.last_read_counts().stat_reads;
    listed += scan.last_read_counts().listed;
  }
  // Each idle process once per kSlices readings, the busy one at every
  // listing (its slice, 5000 % 16 == 8, falls on one); /proc listed every
  // kListEvery readings.
  static_assert(5000 % OtherCpuScan::kSlices % OtherCpuScan::kListEvery == 0);
  EXPECT_EQ(reads, kIdle + OtherCpuScan::kSlices / OtherCpuScan::kListEvery);
  EXPECT_EQ(listed,
            (kIdle + 1) * OtherCpuScan::kSlices / OtherCpuScan::kListEvery);

  // An exit leaves the list at the next listing (reading 24), which also
  // finds a new process.
  proc.remove(5000);
  proc.put(6000, "new", 1, 0);
  for (int i = 21; i <= 24; ++i) scan.read(t += 1, std::nullopt);
  ASSERT_EQ(scan.last_read_counts().listed, kIdle + 1) << "test out of step";
  auto top = scan.top();
  ASSERT_TRUE(top.has_value());
  EXPECT_TRUE(top->empty());
}

TEST(OtherCpuScan, AListingWithNoPidAllocatedSinceTheLastReadsTheKnownOnes) {
  FakeProc proc;
  auto last_pid = [&](uint64_t pid) { proc.set_last_pid(pid); };
  last_pid(5000);
  for (uint32_t pid = 100; pid < 140; ++pid) proc.put(pid, "idle", 1, 10);
  uint64_t busy = 0;
  proc.put(5000, "busy", 1, busy);
  OtherCpuScan scan(proc.root());
  double t = 100;
  for (int i = 1; i <= 4; ++i) {  // the 4th reading is a listing
    proc.put(5000, "busy", 1, busy += static_cast<uint64_t>(kTck));
    scan.read(t += 1, std::nullopt);
    scan.top();
  }
  // No pid since: the 8th reading lists nothing, yet reads the busiest.
  for (int i = 5; i <= 8; ++i) {
    proc.put(5000, "busy", 1, busy += static_cast<uint64_t>(kTck));
    scan.read(t += 1, std::nullopt);
  }
  EXPECT_EQ(scan.last_read_counts().listed, 0u);
  auto top = scan.top();
  ASSERT_TRUE(top && top->size() == 1);
  EXPECT_NEAR(top->front().cpu_pct, 100.0, 1.0);
  // A new process took a pid: the next listing finds it.
  proc.put(6000, "new", 1, 0);
  last_pid(6000);
  for (int i = 9; i <= 12; ++i) scan.read(t += 1, std::nullopt);
  EXPECT_EQ(scan.last_read_counts().listed, 42u);
}

// Where few pids were taken since the last listing, a listing asks each of
// them whether it is a process instead of listing /proc; many, a wrap, or
// every kFullListingEvery-th listing lists /proc.
TEST(OtherCpuScan, AFewNewPidsAreProbedInsteadOfListingProc) {
  FakeProc proc;
  auto last_pid = [&](uint64_t pid) { proc.set_last_pid(pid); };
  last_pid(200);
  proc.put(1, "init", 0, 0);
  for (uint32_t pid = 100; pid < 140; ++pid) proc.put(pid, "idle", 1, 10);
  OtherCpuScan scan(proc.root());
  std::set<uint32_t> threads, asked;
  scan.set_pid_probe([&](uint32_t pid) {
    asked.insert(pid);
    if (!std::filesystem::exists(proc.root() + "/" + std::to_string(pid)))
      return OtherCpuScan::PidKind::kNotProcess;
    return threads.count(pid) ? OtherCpuScan::PidKind::kNotProcess
                              : OtherCpuScan::PidKind::kProcess;
  });
  const uint64_t btime = 1000;
  double t = 2000;
  for (int i = 1; i <= 4; ++i) scan.read(t += 1, btime);
  // Six pids taken since: a busy process (205), a thread of it (203, whose
  // /proc directory exists too), and four gone already.
  proc.put(205, "new-busy", 1, static_cast<uint64_t>(2 * kTck),
           static_cast<uint64_t>((t - btime - 2) * kTck));
  proc.put(203, "new-busy", 1, static_cast<uint64_t>(2 * kTck),
           static_cast<uint64_t>((t - btime - 2) * kTck));
  threads.insert(203);
  last_pid(206);
  for (int i = 5; i <= 8; ++i) scan.read(t += 1, btime);
  EXPECT_EQ(scan.last_read_counts().listed, 0u);
  EXPECT_EQ(scan.last_read_counts().probed, 6u);
  EXPECT_EQ(asked, (std::set<uint32_t>{201, 202, 203, 204, 205, 206}));
  auto top = scan.top();
  ASSERT_TRUE(top && top->size() == 1);
  EXPECT_EQ(top->front().pid, 205u) << "the thread is not a process";
  // More new pids than half the 42 known processes and than kProbeMin:
  // /proc is listed.
  last_pid(206 + OtherCpuScan::kProbeMin + 1);
  for (int i = 9; i <= 12; ++i) scan.read(t += 1, btime);
  EXPECT_EQ(scan.last_read_counts().probed, 0u);
  EXPECT_EQ(scan.last_read_counts().listed, 43u) << "40 idle, init, 203, 205";
  // A pid or two each time: probed, until a full listing is due.
  uint64_t pid = 206 + OtherCpuScan::kProbeMin + 1;
  uint32_t probed_listings = 0;
  for (int listing = 0; listing < 20; ++listing) {
    last_pid(++pid);
    for (int i = 0; i < 4; ++i) scan.read(t += 1, btime);
    if (scan.last_read_counts().listed > 0) break;
    ++probed_listings;
  }
  EXPECT_EQ(probed_listings, OtherCpuScan::kFullListingEvery - 1);
}

TEST(OtherCpuScan, JobMembersAreNotReadAfterTheyAreKnown) {
  FakeProc proc;
  proc.put(30, "python", 1, 0);
  for (uint32_t pid = 31; pid < 91; ++pid) proc.put(pid, "worker", 30, 0);
  std::vector<ProcessSample> table = {listed(30, 1)};
  for (uint32_t pid = 31; pid < 91; ++pid) table.push_back(listed(pid, 30));
  OtherCpuScan scan(proc.root());
  scan.read(1, std::nullopt);
  EXPECT_EQ(scan.last_read_counts().stat_reads, 61u) << "all seen once";
  scan.set_jobs({30}, table);
  scan.read(2, std::nullopt);
  // Only the 61 job processes are in this tree: none read again.
  EXPECT_EQ(scan.last_read_counts().listed, 61u);
  EXPECT_EQ(scan.last_read_counts().stat_reads, 0u);
  // The job ended (NVML lists no process): its processes are other work
  // again, with a new baseline rather than a rate over the whole job.
  scan.set_jobs({}, {});
  proc.put(30, "python", 1, static_cast<uint64_t>(kTck) * 1000);
  scan.read(3, std::nullopt);
  EXPECT_EQ(scan.last_read_counts().stat_reads, 61u);
  auto top = scan.top();
  ASSERT_TRUE(top.has_value());
  EXPECT_TRUE(top->empty()) << "1000 s of CPU over the job is no rate";
}

TEST(OtherCpuScan, AProcessStartedSinceTheLastReadingGetsItsLifetimeCpu) {
  FakeProc proc;
  proc.put(1, "init", 0, 0);
  OtherCpuScan scan(proc.root());
  const uint64_t btime = 1000;
  scan.read(2000.0, btime);
  scan.read(2001.0, btime);
  scan.read(2001.2, btime);  // the third reading does not list /proc
  // Started at 2000.5 (1000.5 s after boot), used 0.4 s of CPU by 2001.5:
  // 40% over its life. A short-lived compiler would be gone by its next
  // slice reading; this is its chance to count.
  proc.put(77, "cc1plus", 1, static_cast<uint64_t>(0.4 * kTck),
           static_cast<uint64_t>(1000.5 * kTck));
  scan.read(2001.5, btime);
  auto top = scan.top();
  ASSERT_TRUE(top && top->size() == 1);
  EXPECT_EQ(top->front().comm, "cc1plus");
  EXPECT_NEAR(top->front().cpu_pct, 40.0, 2.0);  // 0.4 s over 1.0 s of life
}

// init (1) and two children, 40 and 41, that have used `ticks` each.
void put_init_and_two(const FakeProc& proc, const std::string& comm40,
                      const std::string& comm41, uint64_t ticks) {
  proc.put(1, "init", 0, 0);
  proc.put(40, comm40, 1, ticks);
  proc.put(41, comm41, 1, ticks);
}

TEST(OtherCpuScan, AOneShotsSecondReadingReadsTheKnownProcessesUnlisted) {
  FakeProc proc;
  put_init_and_two(proc, "trainer-data", "exits", 0);
  OtherCpuScan scan(proc.root());
  const uint64_t btime = 1000;
  scan.read(2000.0, btime);
  EXPECT_EQ(scan.last_read_counts().listed, 3u);
  // A rate window (30 ms) later: 40 used 15 ms of it, 41 exited, 77 started
  // and is too young for a lifetime CPU%. Nothing is listed; the known
  // processes are read again.
  proc.put(40, "trainer-data", 1, static_cast<uint64_t>(0.015 * kTck + 0.5));
  proc.remove(41);
  proc.put(77, "cc1plus", 1, 1, static_cast<uint64_t>(1000.02 * kTck));
  scan.read(2000.03, btime);
  EXPECT_EQ(scan.last_read_counts().listed, 0u);
  EXPECT_EQ(scan.last_read_counts().stat_reads, 3u);
  auto top = scan.top();
  ASSERT_TRUE(top && top->size() == 1);
  EXPECT_EQ(top->front().pid, 40u);
  // The next listing (the 4th reading) finds 77; 41 is not asked for again.
  scan.read(2001.03, btime);
  scan.read(2002.03, btime);
  EXPECT_EQ(scan.last_read_counts().listed, 3u);
}

// Over a one-shot command's ~30-ms window stat's 10-ms ticks are too coarse
// for a CPU%: the process's CPU clock (nanoseconds) is used where there is
// one, the ticks where there is not.
TEST(OtherCpuScan, TheCpuClockGivesTheRateWhereStatsTicksAreTooCoarse) {
  FakeProc proc;
  put_init_and_two(proc, "yes", "no-clock", 1000);
  OtherCpuScan scan(proc.root());
  std::map<uint32_t, uint64_t> clock_ns = {{40, 10'000'000'000u}};
  scan.set_cpu_clock([&](uint32_t pid) -> std::optional<uint64_t> {
    auto it = clock_ns.find(pid);
    if (it == clock_ns.end()) return std::nullopt;
    return it->second;
  });
  scan.read(2000.0, 1000);
  // 30 ms later both used 29.1 ms of CPU: 2 ticks in stat (20 ms).
  clock_ns[40] += 29'100'000u;
  proc.put(40, "yes", 1, 1002);
  proc.put(41, "no-clock", 1, 1002);
  scan.read(2000.03, 1000);
  auto top = scan.top();
  ASSERT_TRUE(top && top->size() == 2);
  std::map<uint32_t, double> pct;
  for (const auto& p : *top) pct[p.pid] = p.cpu_pct;
  EXPECT_NEAR(pct[40], 97.0, 0.05) << "from the clock";  // to 0.1%
  EXPECT_NEAR(pct[41], 2 / kTck / 0.03 * 100, 0.05) << "from the ticks";
  EXPECT_EQ(scan.last_read_counts().clock_reads, 1u);
}

// A one-shot command's second reading, 30 ms after the first, reads the CPU
// clock of each process that has one instead of its stat (its name and
// parent stand from the first); a process whose clock is gone is read from
// stat, which finds it gone.
TEST(OtherCpuScan, ASecondReadingWithinHalfASecondReadsTheClockAlone) {
  FakeProc proc;
  put_init_and_two(proc, "yes", "exits", 1000);
  proc.put(42, "no-clock", 1, 1000);
  OtherCpuScan scan(proc.root());
  std::map<uint32_t, uint64_t> clock_ns = {{40, 10'000'000'000u},
                                           {41, 10'000'000'000u}};
  scan.set_cpu_clock([&](uint32_t pid) -> std::optional<uint64_t> {
    auto it = clock_ns.find(pid);
    if (it == clock_ns.end()) return std::nullopt;
    return it->second;
  });
  scan.read(2000.0, 1000);
  EXPECT_EQ(scan.last_read_counts().stat_reads, 4u);
  clock_ns[40] += 15'000'000u;  // half of the 30 ms
  proc.put(40, "renamed", 1, 1001);
  clock_ns.erase(41);
  proc.remove(41);
  proc.put(42, "no-clock", 1, 1003);  // 3 ticks: 30 ms, all of it
  scan.read(2000.03, 1000);
  const auto counts = scan.last_read_counts();
  EXPECT_EQ(counts.clock_reads, 1u) << "40's";
  EXPECT_EQ(counts.stat_reads, 3u) << "init's, 42's, and 41's to find it gone";
  auto top = scan.top();
  ASSERT_TRUE(top && top->size() == 2);
  EXPECT_EQ(top->at(0).pid, 42u);
  EXPECT_EQ(top->at(1).pid, 40u);
  EXPECT_NEAR(top->at(1).cpu_pct, 50.0, 0.05);
  EXPECT_EQ(top->at(1).comm, "yes") << "its stat was not read again";
}

// Pids of a /proc that is not this process's own (a fixture tree, another
// pid namespace's mounted at --proc-root) are not this machine's
// processes: their CPU clocks are not read.
TEST(OtherCpuScan, NoCpuClockIsReadForAnotherNamespacesProc) {
  FakeProc proc;
  proc.put(1, "init", 0, 0);
  proc.put(40, "yes", 1, 1000);
  std::filesystem::create_directory_symlink("1", proc.root() + "/self");
  OtherCpuScan scan(proc.root());
  scan.read(2000.0, 1000);
  EXPECT_EQ(scan.last_read_counts().stat_reads, 2u);
  EXPECT_EQ(scan.last_read_counts().clock_reads, 0u);
}

TEST(OtherCpuScan, AReusedPidStartsOverAndAHostileCommIsCapped) {
  FakeProc proc;
  // Read at its slice in the 3rd reading (35 % kSlices == 3).
  constexpr uint32_t kPid = 35;
  static_assert(kPid % OtherCpuScan::kSlices == 3);
  proc.put(kPid, "old", 1, 50000, 100);
  OtherCpuScan scan(proc.root());
  scan.read(10, std::nullopt);
  scan.read(11, std::nullopt);
  // Another process got the pid: its ticks are no delta of the old one's.
  const std::string hostile(5000, 'x');
  proc.put(kPid, hostile, 1, 10, 900);
  scan.read(12, std::nullopt);
  auto top = scan.top();
  ASSERT_TRUE(top.has_value());
  EXPECT_TRUE(top->empty()) << "no rate from the old process's ticks";
  proc.put(kPid, hostile, 1, 10 + static_cast<uint64_t>(kTck), 900);
  scan.read(13, std::nullopt);
  top = scan.top();
  ASSERT_TRUE(top && top->size() == 1);
  EXPECT_LE(top->front().comm.size(), OtherCpuScan::kCommMax + 40);
  EXPECT_EQ(top->front().comm.substr(0, 10), "xxxxxxxxxx");
  EXPECT_NEAR(top->front().cpu_pct, 100.0, 1.0);
}

// ---- live /proc ------------------------------------------------------------

pid_t spawn_spinner() {
  pid_t pid = fork();
  if (pid == 0) {
    gd::test::burn_cpu(60);
    _exit(0);
  }
  return pid;
}

TEST(OtherCpuScanLive, ARealBusyProcessIsOtherWorkTheJobsOwnAreNot) {
  // The "GPU job": a child that sleeps, with a busy worker of its own.
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t job = fork();
  if (job == 0) {
    pid_t worker = spawn_spinner();
    (void)!write(ready[1], &worker, sizeof worker);
    pause();
    _exit(0);
  }
  pid_t worker = 0;
  ASSERT_EQ(read(ready[0], &worker, sizeof worker),
            static_cast<ssize_t>(sizeof worker));
  pid_t other = spawn_spinner();

  gd::HostSource host("/proc", "/sys");
  std::vector<uint32_t> gpu = {static_cast<uint32_t>(job)};
  auto now = [] {
    return std::chrono::duration<double>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  // The spinner's own CPU time read just before and just after each of the
  // scan's readings: on a loaded machine (a sanitizer pass with fuzzers
  // beside it) a spinner gets well under a core, and not evenly, so the
  // scan's figure is checked against what the spinner can have used between
  // its two readings, over the times the scan was given.
  clockid_t other_clock;
  ASSERT_EQ(clock_getcpuclockid(other, &other_clock), 0);
  auto cpu_s = [&] {
    timespec ts{};
    clock_gettime(other_clock, &ts);
    return static_cast<double>(ts.tv_sec) +
           static_cast<double>(ts.tv_nsec) / 1e9;
  };
  const double t1 = now(), before1 = cpu_s();
  host.sample(t1);
  const double after1 = cpu_s();
  host.processes(gpu, now());
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const double t2 = now(), before2 = cpu_s();
  host.sample(t2);
  const double after2 = cpu_s();
  host.processes(gpu, now());
  const double least_pct = (before2 - after1) / (t2 - t1) * 100;
  const double most_pct = (after2 - before1) / (t2 - t1) * 100;
  auto top = host.other_cpu_top();

  kill(worker, SIGKILL);
  kill(job, SIGKILL);
  kill(other, SIGKILL);
  waitpid(job, nullptr, 0);
  waitpid(other, nullptr, 0);

  ASSERT_TRUE(top.has_value());
  auto listed_pids = pids(*top);
  auto has = [&](pid_t p) {
    return std::find(listed_pids.begin(), listed_pids.end(),
                     static_cast<uint32_t>(p)) != listed_pids.end();
  };
  EXPECT_TRUE(has(other)) << "the unrelated spinner is other work";
  EXPECT_FALSE(has(worker)) << "the job's own worker is not";
  EXPECT_FALSE(has(job));
  EXPECT_FALSE(has(getpid())) << "the job's ancestor (this test) is not";
  for (const auto& p : *top)
    if (p.pid == static_cast<uint32_t>(other)) {
      EXPECT_GT(least_pct, 1.0) << "the spinner ran";
      EXPECT_GE(p.cpu_pct, least_pct - 0.5);
      EXPECT_LE(p.cpu_pct, most_pct + 0.5);
      EXPECT_FALSE(p.comm.empty());
      EXPECT_FALSE(p.user.empty());
    }
}

// The kernel tells a process from a thread that does not lead its group and
// from a pid in use by nothing.
TEST(OtherCpuScanLive, ThisMachinesKernelTellsAProcessFromAThread) {
  using Kind = OtherCpuScan::PidKind;
  EXPECT_EQ(OtherCpuScan::probe_own_pid(static_cast<uint32_t>(getpid())),
            Kind::kProcess);
  std::atomic<pid_t> tid{0};
  std::atomic<bool> done{false};
  std::thread thread([&] {
    tid = gettid();
    while (!done) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  while (tid == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const Kind of_thread =
      OtherCpuScan::probe_own_pid(static_cast<uint32_t>(tid));
  done = true;
  thread.join();
  EXPECT_EQ(of_thread, Kind::kNotProcess);
  pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  EXPECT_EQ(OtherCpuScan::probe_own_pid(static_cast<uint32_t>(child)),
            Kind::kNotProcess)
      << "a reaped child's pid";
}

// On this machine's /proc each process's CPU clock is read, and the process
// reading (gpudoctor) is not other work, busy as it is.
TEST(OtherCpuScanLive, ThisMachinesProcReadsEachProcesssCpuClock) {
  pid_t spinner = spawn_spinner();
  OtherCpuScan scan("/proc");
  std::atomic<bool> spin{true};
  std::thread busy_self([&] {
    while (spin.load(std::memory_order_relaxed)) {
    }
  });
  scan.read(2000.0, std::nullopt);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  scan.read(2000.03, std::nullopt);
  spin = false;
  busy_self.join();
  const auto counts = scan.last_read_counts();
  auto top = scan.top();
  kill(spinner, SIGKILL);
  waitpid(spinner, nullptr, 0);
  // The second reading, 30 ms after the first, reads the known processes'
  // CPU clocks alone; stat only for one that exited meanwhile.
  EXPECT_GT(counts.clock_reads, 0u);
  EXPECT_LT(counts.stat_reads, counts.clock_reads);
  ASSERT_TRUE(top.has_value());
  bool listed = false;
  for (const auto& p : *top) {
    listed |= p.pid == static_cast<uint32_t>(spinner);
    EXPECT_NE(p.pid, static_cast<uint32_t>(getpid())) << "itself is listed";
  }
  EXPECT_TRUE(listed);
}

}  // namespace
