// HostSource::processes() over the fixture tree: the process tree under a
// GPU pid, every field, the two discovery modes and per-pid cpu_pct.
#include <gtest/gtest.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>

#include "fixture_tree.h"
#include "procfs/host_source.h"
#include "procfs/process_table.h"

using gd::HostSource;
using gd::ProcessSample;
using gd::test::FixtureTree;

namespace {

const ProcessSample* find_pid(const std::vector<ProcessSample>& ps,
                              uint32_t pid) {
  auto it = std::find_if(ps.begin(), ps.end(),
                         [&](const ProcessSample& p) { return p.pid == pid; });
  return it == ps.end() ? nullptr : &*it;
}

std::vector<uint32_t> pids_of(const std::vector<ProcessSample>& ps) {
  std::vector<uint32_t> out;
  for (const auto& p : ps) out.push_back(p.pid);
  return out;
}

std::string stat_line(uint32_t pid, const std::string& comm, char state,
                      uint32_t ppid, uint64_t utime, uint64_t stime,
                      uint64_t starttime) {
  return std::to_string(pid) + " (" + comm + ") " + state + " " +
         std::to_string(ppid) + " 1 1 0 -1 4194560 1000 0 5 0 " +
         std::to_string(utime) + " " + std::to_string(stime) +
         " 0 0 20 0 1 0 " + std::to_string(starttime) +
         " 123456789 100 18446744073709551615 1 1 0\n";
}

std::string name_of_uid(uid_t uid) {
  passwd* pw = getpwuid(uid);
  return pw ? pw->pw_name : std::to_string(uid);
}

}  // namespace

TEST(FixtureProcesses, GpuPidWithChildrenGrandchildAndZombie) {
  FixtureTree tree;
  HostSource c(tree.proc(), tree.sys());
  auto ps = c.processes({1000}, 10.0);
  // 1001, 1002 from the main thread's children file, 1003 (zombie) from a
  // second thread's, 1004 is 1001's child. sshd (3000) is not related.
  EXPECT_EQ(pids_of(ps), (std::vector<uint32_t>{1000, 1001, 1002, 1003, 1004}));
}

// A view sampling each second hands back the last list: the new one is
// written into its memory, and nothing of what it held is kept.
TEST(FixtureProcesses, ASpentListIsReusedAndItsProcessesDropped) {
  FixtureTree tree;
  HostSource c(tree.proc(), tree.sys());
  std::vector<ProcessSample> spent(3);
  spent[0].pid = 4242;
  spent[1].pid = 1000;
  spent[1].cmdline = "an old command line";
  spent.reserve(64);
  const ProcessSample* room = spent.data();
  auto ps = c.processes({1000}, 10.0, std::move(spent));
  EXPECT_EQ(pids_of(ps), (std::vector<uint32_t>{1000, 1001, 1002, 1003, 1004}));
  EXPECT_EQ(ps.data(), room);
  EXPECT_NE(find_pid(ps, 1000)->cmdline, "an old command line");
}

TEST(FixtureProcesses, MainProcessFields) {
  FixtureTree tree;
  HostSource c(tree.proc(), tree.sys());
  auto ps = c.processes({1000}, 10.0);
  const ProcessSample* p = find_pid(ps, 1000);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->ppid, 1u);
  EXPECT_EQ(p->user, name_of_uid(0));
  EXPECT_EQ(p->name, "python");
  EXPECT_EQ(p->cmdline, "python train.py --bs 256");
  EXPECT_EQ(p->state, "S");
  EXPECT_EQ(p->threads, 37);
  EXPECT_EQ(p->rss_bytes,
            250000ull * static_cast<uint64_t>(sysconf(_SC_PAGESIZE)));
  EXPECT_EQ(p->cgroup, "/kubepods/burstable/pod1a2b/3c4d");
  EXPECT_EQ(p->libs, (std::vector<std::string>{
                         "libcublas.so.12", "libcublasLt.so.12",
                         "libcuda.so.535.129.03", "libcudart.so.12.1.105",
                         "libcudnn_ops_infer.so.8", "libnccl.so.2.18.3"}));
  ASSERT_TRUE(p->start_time);
  EXPECT_DOUBLE_EQ(*p->start_time,
                   1700000000.0 + 12345.0 / sysconf(_SC_CLK_TCK));
  EXPECT_FALSE(p->cpu_pct) << "first call has no previous reading";
}

TEST(FixtureProcesses, WeirdCommZombieAndCgroupV1) {
  FixtureTree tree;
  HostSource c(tree.proc(), tree.sys());
  auto ps = c.processes({1000}, 10.0);

  const ProcessSample* weird = find_pid(ps, 1002);
  ASSERT_NE(weird, nullptr);
  EXPECT_EQ(weird->name, "my (weird) name)");
  EXPECT_EQ(weird->ppid, 1000u);
  EXPECT_EQ(weird->threads, 2);
  EXPECT_EQ(weird->cgroup,
            "/user.slice/user-1000.slice/session-3.scope");  // hybrid: v2 line

  const ProcessSample* zombie = find_pid(ps, 1003);
  ASSERT_NE(zombie, nullptr);
  EXPECT_EQ(zombie->state, "Z");
  EXPECT_EQ(zombie->cmdline, "");
  EXPECT_TRUE(zombie->libs.empty());

  const ProcessSample* worker = find_pid(ps, 1001);
  ASSERT_NE(worker, nullptr);
  EXPECT_EQ(worker->state, "R");
  EXPECT_EQ(worker->cgroup, "/docker/abc123");
  EXPECT_EQ(worker->user, name_of_uid(4242));
  EXPECT_TRUE(worker->libs.empty());

  const ProcessSample* grandchild = find_pid(ps, 1004);
  ASSERT_NE(grandchild, nullptr);
  EXPECT_EQ(grandchild->ppid, 1001u);
  EXPECT_EQ(grandchild->cmdline, "sleep 100");
}

TEST(FixtureProcesses, KernelThreadHasEmptyCmdline) {
  FixtureTree tree;
  HostSource c(tree.proc(), tree.sys());
  auto ps = c.processes({50}, 10.0);
  const ProcessSample* k = find_pid(ps, 50);
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->name, "kworker/0:1-events");
  EXPECT_EQ(k->ppid, 2u);
  EXPECT_EQ(k->cmdline, "");
  EXPECT_EQ(k->state, "I");
}

TEST(FixtureProcesses, PidNotInProcIsMissing) {
  FixtureTree tree;
  HostSource c(tree.proc(), tree.sys());
  auto ps = c.processes({9999, 1002}, 10.0);
  // 1000: 1002's parent, listed as the ancestor that groups its job.
  ASSERT_EQ(pids_of(ps), (std::vector<uint32_t>{1000, 1002, 9999}));
  EXPECT_EQ(ps[2].state, "missing");
  EXPECT_FALSE(ps[2].ppid);
  EXPECT_FALSE(ps[2].cpu_pct);
  EXPECT_FALSE(ps[2].rss_bytes);
}

TEST(FixtureProcesses, ScanFallbackWithoutChildrenFilesFindsSameTree) {
  FixtureTree tree;
  for (const auto& e :
       std::filesystem::recursive_directory_iterator(tree.proc()))
    if (e.path().filename() == "children") std::filesystem::remove(e.path());
  gd::procfs::ProcessTable table(tree.proc());
  auto ps = table.processes({1000}, 10.0, std::nullopt);
  EXPECT_EQ(table.discovery(), gd::procfs::ProcessTable::Discovery::kStatScan);
  EXPECT_EQ(pids_of(ps), (std::vector<uint32_t>{1000, 1001, 1002, 1003, 1004}));
}

TEST(FixtureProcesses, ChildrenFilesUsedWhenPresent) {
  FixtureTree tree;
  gd::procfs::ProcessTable table(tree.proc());
  table.processes({1000}, 10.0, std::nullopt);
  EXPECT_EQ(table.discovery(),
            gd::procfs::ProcessTable::Discovery::kChildrenFiles);
}

TEST(FixtureProcesses, CpuPctFromTicksBetweenCalls) {
  FixtureTree tree;
  HostSource c(tree.proc(), tree.sys());
  c.processes({1000}, 10.0);
  const long hz = sysconf(_SC_CLK_TCK);
  // 1.5 CPU-seconds over 2 s of wall time: 75% of one CPU. Worker 1001 adds
  // 4 CPU-seconds in 2 s (200%: multi-threaded).
  tree.write("proc/1000/stat",
             stat_line(1000, "python", 'R', 1, 500 + hz, 100 + hz / 2, 12345));
  tree.write("proc/1001/stat", stat_line(1001, "pt_data_worker", 'R', 1000,
                                         900 + 4 * hz, 10, 12400));
  auto ps = c.processes({1000}, 12.0);
  ASSERT_TRUE(find_pid(ps, 1000)->cpu_pct);
  EXPECT_NEAR(*find_pid(ps, 1000)->cpu_pct, 75.0, 1e-9);
  EXPECT_NEAR(*find_pid(ps, 1001)->cpu_pct, 200.0, 1e-9);
  EXPECT_NEAR(*find_pid(ps, 1002)->cpu_pct, 0.0, 1e-9);
}

TEST(FixtureProcesses, ReusedPidStartsCpuAccountingAfresh) {
  FixtureTree tree;
  HostSource c(tree.proc(), tree.sys());
  c.processes({1002}, 10.0);
  // Same pid, new starttime: a different process. Its ticks must not be
  // compared with the old process's.
  tree.write("proc/1002/stat",
             stat_line(1002, "newproc", 'R', 1, 50000, 0, 99999));
  tree.write("proc/1002/cmdline", std::string("newproc\0", 8));
  auto ps = c.processes({1002}, 11.0);
  ASSERT_EQ(ps.size(), 1u);
  EXPECT_FALSE(ps[0].cpu_pct);
  EXPECT_EQ(ps[0].cmdline, "newproc")
      << "cached cmdline of the old process was dropped";
}

TEST(FixtureProcesses, StaticFieldsCachedThenRefreshedAfterInterval) {
  FixtureTree tree;
  HostSource c(tree.proc(), tree.sys());
  c.processes({1001}, 10.0);
  tree.write(
      "proc/1001/maps",
      "7f00-7f01 r-xp 00000000 fd:01 1 /usr/lib/libcudart.so.12.2.140\n");
  auto early = c.processes({1001}, 20.0);
  EXPECT_TRUE(find_pid(early, 1001)->libs.empty())
      << "maps is not re-read within the refresh interval";
  // Refreshed once the interval plus its per-pid spread (< kRescanSlices s)
  // has passed.
  auto late = c.processes(
      {1001}, 10.0 + gd::procfs::ProcessTable::kStaticRefreshSeconds +
                  gd::procfs::ProcessTable::kRescanSlices);
  EXPECT_EQ(find_pid(late, 1001)->libs,
            (std::vector<std::string>{"libcudart.so.12.2.140"}));
}

TEST(FixtureProcesses, WorkersStaticFieldsRefreshedLessOftenOrOnExec) {
  FixtureTree tree;
  HostSource c(tree.proc(), tree.sys());
  c.processes({1000}, 10.0);
  tree.write("proc/1002/cmdline", std::string("python3\0-m\0tool\0", 16));
  tree.write(
      "proc/1002/maps",
      "7f00-7f01 r-xp 00000000 fd:01 1 /usr/lib/libcudart.so.12.2.140\n");
  // A GPU process's refresh interval (and its spread) later, a worker's
  // command line still stands...
  double t = 10.0 + gd::procfs::ProcessTable::kStaticRefreshSeconds +
             gd::procfs::ProcessTable::kRescanSlices;
  auto ps = c.processes({1000}, t);
  EXPECT_EQ(find_pid(ps, 1002)->cmdline, "weird")
      << "a worker is not re-read every 30 s";
  // ...until its own, longer interval has passed,
  ps = c.processes(
      {1000}, 10.0 + gd::procfs::ProcessTable::kDescendantStaticRefreshSeconds +
                  gd::procfs::ProcessTable::kRescanSlices);
  EXPECT_EQ(find_pid(ps, 1002)->cmdline, "python3 -m tool");
  EXPECT_TRUE(find_pid(ps, 1002)->libs.empty())
      << "a worker's maps is read when first seen and after an exec only";
  // or its comm changes (an exec): re-read at once.
  tree.write("proc/1002/cmdline", std::string("/bin/sh\0", 8));
  tree.write("proc/1002/stat", stat_line(1002, "sh", 'S', 1000, 10, 0, 12401));
  ps = c.processes({1000}, 400.0);
  EXPECT_EQ(find_pid(ps, 1002)->cmdline, "/bin/sh");
  EXPECT_EQ(find_pid(ps, 1002)->libs,
            (std::vector<std::string>{"libcudart.so.12.2.140"}));
}

TEST(FixtureProcesses, CacheDropsProcessesThatAreGone) {
  FixtureTree tree;
  gd::procfs::ProcessTable table(tree.proc());
  table.processes({1000}, 10.0, std::nullopt);
  EXPECT_EQ(table.cached_process_count(), 5u);
  tree.remove("proc/1004");
  tree.write("proc/1001/task/1001/children", "");
  auto ps = table.processes({1000}, 11.0, std::nullopt);
  EXPECT_EQ(ps.size(), 4u);
  EXPECT_EQ(table.cached_process_count(), 4u);
}

namespace {

// A process of the fixture tree: stat, cmdline, a maps naming libcudart and
// its main thread's (empty) children file.
void add_process(const FixtureTree& tree, uint32_t pid, const std::string& comm,
                 uint32_t ppid, const std::string& cmdline) {
  std::string dir = "proc/" + std::to_string(pid);
  std::filesystem::create_directories(tree.proc() + "/../" + dir + "/task/" +
                                      std::to_string(pid));
  tree.write(dir + "/stat",
             stat_line(pid, comm, 'S', ppid, 10, 10, 20000 + pid));
  std::string argv = cmdline;
  std::replace(argv.begin(), argv.end(), ' ', '\0');
  tree.write(dir + "/cmdline", argv + std::string(1, '\0'));
  tree.write(
      dir + "/maps",
      "7f00-7f01 r-xp 00000000 fd:01 1 /usr/lib/libcudart.so.12.2.140\n");
  tree.write(dir + "/task/" + std::to_string(pid) + "/children", "");
}

}  // namespace

TEST(FixtureProcesses, GpuProcessAncestorsAreListedUpToTheLauncherOrShell) {
  FixtureTree tree;
  // bash 900 -> torchrun 950 -> python wrapper 955 -> rank 960 (GPU);
  // bash 900 -> job 970 (GPU).
  add_process(tree, 900, "bash", 1, "-bash");
  add_process(tree, 950, "torchrun", 900,
              "/usr/bin/python3 /usr/local/bin/torchrun t.py");
  add_process(tree, 955, "python3", 950, "python3 wrapper.py");
  add_process(tree, 960, "python3", 955, "python3 t.py --rank 0");
  add_process(tree, 970, "python3", 900, "python3 other.py");
  HostSource ranks(tree.proc(), tree.sys());
  auto ps = ranks.processes({960}, 10.0);
  // The walk ends at the launcher: the shell above it is not listed.
  ASSERT_EQ(pids_of(ps), (std::vector<uint32_t>{950, 955, 960}));
  EXPECT_EQ(find_pid(ps, 950)->cmdline,
            "/usr/bin/python3 /usr/local/bin/torchrun t.py");
  EXPECT_EQ(find_pid(ps, 950)->ppid, 900u);
  EXPECT_TRUE(find_pid(ps, 950)->libs.empty())
      << "an ancestor's maps is not read";
  EXPECT_FALSE(find_pid(ps, 960)->libs.empty());

  HostSource job(tree.proc(), tree.sys());
  EXPECT_EQ(pids_of(job.processes({970}, 10.0)),
            (std::vector<uint32_t>{900, 970}));
}

TEST(FixtureProcesses, AncestorWalkIsBoundedAndLeavesInitOut) {
  FixtureTree tree;
  // 20 nested wrappers under init, none a launcher or shell; the GPU
  // process is the innermost.
  for (uint32_t pid = 900; pid < 920; ++pid)
    add_process(tree, pid, "python3", pid == 900 ? 1 : pid - 1,
                "python3 wrap.py");
  HostSource c(tree.proc(), tree.sys());
  auto ps = c.processes({919}, 10.0);
  EXPECT_EQ(ps.size(), 1 + gd::procfs::ProcessTable::kMaxJobAncestors);
  EXPECT_EQ(find_pid(ps, 1), nullptr);
  HostSource near_init(tree.proc(), tree.sys());
  EXPECT_EQ(pids_of(near_init.processes({901}, 10.0)),
            (std::vector<uint32_t>{900, 901}));
}

TEST(FixtureProcesses, GpuProcessChildrenAreReReadOnceAPidWasAllocated) {
  FixtureTree tree;
  gd::procfs::ProcessTable table(tree.proc());
  table.processes({1000}, 10.0, std::nullopt);
  // A fork: the new worker, in the GPU process's children file...
  add_process(tree, 1005, "pt_data_worker", 1000, "python3 train.py");
  tree.write("proc/1000/task/1000/children", "1001 1002 1005");
  // ...with loadavg's last pid unmoved, which a real kernel cannot show
  // after a fork: the list read before stands, and no children file is
  // read for the GPU process.
  auto ps = table.processes({1000}, 11.0, std::nullopt);
  EXPECT_EQ(find_pid(ps, 1005), nullptr);
  EXPECT_EQ(table.last_read_counts().children_reads, 0u);
  // The pid counter moved: the file is read and the worker found.
  tree.write("proc/loadavg", "1.25 0.80 0.50 3/456 7891\n");
  ps = table.processes({1000}, 12.0, std::nullopt);
  ASSERT_NE(find_pid(ps, 1005), nullptr);
  EXPECT_EQ(find_pid(ps, 1005)->ppid, 1000u);
  // Without a loadavg there is no counter to trust: read every sample.
  tree.remove("proc/loadavg");
  tree.write("proc/1000/task/1000/children", "1001 1002");
  ps = table.processes({1000}, 13.0, std::nullopt);
  EXPECT_EQ(find_pid(ps, 1005), nullptr);
}

// A GPU process with more new workers than ProcessTable::kParallelStaticMin:
// their user, command line, cgroup, Slurm job and libraries are read after
// the walk, on several threads, and land on each worker's own entry.
TEST(FixtureProcesses, ManyNewWorkersGetTheirOwnStaticFacts) {
  FixtureTree tree;
  constexpr uint32_t kRoot = 5000, kFirst = 5100, kWorkers = 150;
  static_assert(kWorkers > gd::procfs::ProcessTable::kParallelStaticMin);
  auto add = [&](uint32_t pid, uint32_t ppid, const std::string& children) {
    const std::string dir = "proc/" + std::to_string(pid);
    std::filesystem::create_directories(tree.proc() + "/" +
                                        std::to_string(pid) + "/task/" +
                                        std::to_string(pid));
    tree.write(dir + "/stat", stat_line(pid, "w", 'S', ppid, 1, 1, 100));
    tree.write(dir + "/status", "Name:\tw\nUid:\t" + std::to_string(pid) +
                                    "\t" + std::to_string(pid) + "\t0\t0\n" +
                                    "NSpid:\t" + std::to_string(pid) + "\n");
    std::string cmd = "worker " + std::to_string(pid);
    cmd[6] = '\0';
    tree.write(dir + "/cmdline", cmd + std::string(1, '\0'));
    tree.write(dir + "/cgroup",
               "0::/slurm/uid_1/job_" + std::to_string(pid) + "/step_0\n");
    tree.write(dir + "/maps",
               pid % 2 ? "7f0000000000-7f0000001000 r-xp 00000000 fd:01 9 "
                         "/usr/lib/libcudart.so.12\n"
                       : "");
    tree.write(dir + "/task/" + std::to_string(pid) + "/children", children);
  };
  std::string children;
  for (uint32_t i = 0; i < kWorkers; ++i) {
    add(kFirst + i, kRoot, "");
    children += std::to_string(kFirst + i) + " ";
  }
  add(kRoot, 1, children);
  gd::procfs::ProcessTable table(tree.proc());
  auto ps = table.processes({kRoot}, 10.0, std::nullopt);
  ASSERT_EQ(ps.size(), kWorkers + 1);
  for (uint32_t i = 0; i < kWorkers; ++i) {
    const uint32_t pid = kFirst + i;
    const ProcessSample* p = find_pid(ps, pid);
    ASSERT_NE(p, nullptr) << pid;
    EXPECT_EQ(p->user, name_of_uid(pid)) << pid;
    EXPECT_EQ(p->cmdline, "worker " + std::to_string(pid));
    EXPECT_EQ(p->cgroup, "/slurm/uid_1/job_" + std::to_string(pid) + "/step_0");
    EXPECT_EQ(p->slurm_job_id, std::to_string(pid));
    EXPECT_EQ(p->ns_pid, pid);
    EXPECT_EQ(p->libs, pid % 2 ? std::vector<std::string>{"libcudart.so.12"}
                               : std::vector<std::string>{});
  }
  // The next sample keeps them from the cache.
  auto again = table.processes({kRoot}, 11.0, std::nullopt);
  const ProcessSample* p = find_pid(again, kFirst + 7);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->cmdline, "worker " + std::to_string(kFirst + 7));
  EXPECT_EQ(p->libs, std::vector<std::string>{"libcudart.so.12"});
}
