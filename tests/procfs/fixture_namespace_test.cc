// What a GPU process sees from inside its container: its pid in its own PID
// namespace (last NSpid value) and the size of its /dev/shm, read through
// <proc>/<pid>/root.
#include <gtest/gtest.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <filesystem>

#include "fixture_tree.h"
#include "procfs/host_source.h"
#include "procfs/process_files.h"

using gd::HostSource;
using gd::ProcessSample;
using gd::test::FixtureTree;

namespace {

const ProcessSample* find_fixture_pid(const std::vector<ProcessSample>& ps,
                                      uint32_t pid) {
  auto it = std::find_if(ps.begin(), ps.end(),
                         [&](const ProcessSample& p) { return p.pid == pid; });
  return it == ps.end() ? nullptr : &*it;
}

}  // namespace

TEST(NamespaceFacts, NsPidIsTheLastNSpidValue) {
  EXPECT_EQ(
      gd::procfs::parse_status_ns_pid("Pid:\t4242\nNSpid:\t4242\t17\t1\n"), 1u);
  EXPECT_EQ(gd::procfs::parse_status_ns_pid("NSpid:\t4242\n"), 4242u);
  EXPECT_EQ(gd::procfs::parse_status_ns_pid("Pid:\t4242\n"), std::nullopt);
  EXPECT_EQ(gd::procfs::parse_status_ns_pid("NSpid:\t4242\tx\n"), std::nullopt);
}

TEST(NamespaceFacts, GpuProcessInAContainerHasItsNsPid) {
  FixtureTree tree;
  tree.write("proc/1000/status",
             "Name:\tpython\nPid:\t1000\nPPid:\t1\nUid:\t0\t0\t0\t0\n"
             "NSpid:\t1000\t7\nThreads:\t37\n");
  HostSource c(tree.proc(), tree.sys());
  auto ps = c.processes({1000}, 10.0);
  const ProcessSample* gpu = find_fixture_pid(ps, 1000);
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->ns_pid, 7u);
  const ProcessSample* worker = find_fixture_pid(ps, 1001);
  ASSERT_NE(worker, nullptr);
  EXPECT_EQ(worker->ns_pid, 1001u);  // host namespace: one value
}

TEST(NamespaceFacts, DevShmSizeIsReadThroughTheGpuProcessRoot) {
  // The fixture's process 1000 has its root at "/", as a process outside a
  // container does: its /dev/shm is this machine's.
  struct statvfs fs {};
  ASSERT_EQ(statvfs("/dev/shm", &fs), 0) << "this test needs /dev/shm";
  uint64_t expected = static_cast<uint64_t>(fs.f_blocks) * fs.f_frsize;
  FixtureTree tree;
  std::filesystem::create_directory_symlink("/", tree.proc() + "/1000/root");
  std::filesystem::create_directory_symlink("/", tree.proc() + "/1001/root");
  HostSource c(tree.proc(), tree.sys());
  auto ps = c.processes({1000}, 10.0);
  const ProcessSample* gpu = find_fixture_pid(ps, 1000);
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->dev_shm_bytes, expected);
  // Not read for processes that are not GPU processes (the cost stays off
  // the per-sample budget of their descendants).
  const ProcessSample* worker = find_fixture_pid(ps, 1001);
  ASSERT_NE(worker, nullptr);
  EXPECT_EQ(worker->dev_shm_bytes, std::nullopt);
}

TEST(NamespaceFacts, DevShmUnknownWhenTheRootCannotBeLookedAt) {
  FixtureTree tree;  // no <proc>/1000/root at all
  HostSource c(tree.proc(), tree.sys());
  auto ps = c.processes({1000}, 10.0);
  const ProcessSample* gpu = find_fixture_pid(ps, 1000);
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->dev_shm_bytes, std::nullopt);
}
