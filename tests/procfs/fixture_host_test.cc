// HostSource::host_info() and sample() over the fixture tree.
#include <gtest/gtest.h>
#include <unistd.h>

#include "fixture_tree.h"
#include "procfs/host_source.h"

using gd::HostSource;
using gd::test::FixtureTree;

namespace {

std::string disk_line(int major, int minor, const std::string& name,
                      uint64_t sectors_read, uint64_t sectors_written,
                      uint64_t io_ticks) {
  return std::to_string(major) + " " + std::to_string(minor) + " " + name +
         " 100 0 " + std::to_string(sectors_read) + " 50 200 0 " +
         std::to_string(sectors_written) + " 80 0 " + std::to_string(io_ticks) +
         " 130 0 0 0 0 0 0\n";
}

}  // namespace

TEST(FixtureHostInfo, ReadsHostnameKernelCpuAndMemoryTotals) {
  FixtureTree tree;
  HostSource c(tree.proc(), tree.sys());
  gd::HostInfo h = c.host_info();
  EXPECT_EQ(h.hostname, "fixturehost");
  EXPECT_EQ(h.kernel, "5.15.0-91-generic");
  EXPECT_EQ(h.cpu_model, "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz");
  EXPECT_EQ(h.cpu_count, 2);
  EXPECT_EQ(h.mem_total_bytes, 16384000ull * 1024);
  EXPECT_EQ(h.swap_total_bytes, 2097148ull * 1024);
}

TEST(FixtureHostInfo, PidNamespaceFromSelfNsLink) {
  FixtureTree tree;
  HostSource c(tree.proc(), tree.sys());
  EXPECT_EQ(c.host_info().pid_namespace,
            "");  // no ns link, single NSpid: unknown

  ASSERT_EQ(
      symlink("pid:[4026531836]", (tree.proc() + "/self/ns_pid_tmp").c_str()),
      0);
  std::filesystem::create_directories(tree.proc() + "/self/ns");
  std::filesystem::rename(tree.proc() + "/self/ns_pid_tmp",
                          tree.proc() + "/self/ns/pid");
  EXPECT_EQ(c.host_info().pid_namespace, "host");

  tree.remove("proc/self/ns/pid");
  ASSERT_EQ(symlink("pid:[4026532511]", (tree.proc() + "/self/ns/pid").c_str()),
            0);
  EXPECT_EQ(c.host_info().pid_namespace, "container");
}

TEST(FixtureHostSample, FirstSampleHasLevelsButNoRates) {
  FixtureTree tree;
  HostSource c(tree.proc(), tree.sys());
  gd::HostSample s = c.sample(100.0);
  EXPECT_EQ(s.load1, 1.25);
  EXPECT_EQ(s.mem_available_bytes, 8192000ull * 1024);
  EXPECT_EQ(s.swap_used_bytes, (2097148ull - 1048574ull) * 1024);
  EXPECT_EQ(s.psi_cpu_some_pct, 12.5);
  EXPECT_EQ(s.psi_mem_some_pct, 0.75);
  EXPECT_FALSE(s.psi_io_some_pct) << "fixture has no pressure/io";
  EXPECT_FALSE(s.cpu_util_pct);
  EXPECT_FALSE(s.swap_in_pages_per_s);
  EXPECT_FALSE(s.disk_read_bytes_per_s);
  EXPECT_FALSE(s.disk_busy_pct);
}

TEST(FixtureHostSample, RatesBetweenTwoSnapshots) {
  FixtureTree tree;
  HostSource c(tree.proc(), tree.sys());
  c.sample(100.0);

  // 2 s later: +600 user, +200 system, +1000 idle, +100 iowait, +100 steal.
  tree.write("proc/stat",
             "cpu  1600 0 700 9000 400 0 50 250 0 0\nbtime 1700000000\n");
  tree.write("proc/vmstat", "pswpin 120\npswpout 250\n");
  // sda +2000 sectors read, +500 ms busy; its partition sda1 moves the same
  // and must not be counted twice. nvme0n1 +4000 written, +1500 ms busy.
  // dm-0 and loop0 move a lot and are not counted at all.
  tree.write("proc/diskstats",
             disk_line(7, 0, "loop0", 900000, 0, 2000) +
                 disk_line(8, 0, "sda", 12000, 20000, 1500) +
                 disk_line(8, 1, "sda1", 12000, 20000, 1500) +
                 disk_line(259, 0, "nvme0n1", 30000, 44000, 4500) +
                 disk_line(259, 1, "nvme0n1p1", 30000, 44000, 4500) +
                 disk_line(253, 0, "dm-0", 990000, 990000, 6999));
  gd::HostSample s = c.sample(102.0);

  ASSERT_TRUE(s.cpu_util_pct);
  EXPECT_DOUBLE_EQ(*s.cpu_util_pct, 40.0);  // 800 busy of 2000
  EXPECT_DOUBLE_EQ(*s.cpu_iowait_pct, 5.0);
  EXPECT_DOUBLE_EQ(*s.cpu_steal_pct, 5.0);
  EXPECT_DOUBLE_EQ(*s.swap_in_pages_per_s, 10.0);
  EXPECT_DOUBLE_EQ(*s.swap_out_pages_per_s, 25.0);
  EXPECT_EQ(s.disk_read_bytes_per_s, 2000u * 512 / 2);
  EXPECT_EQ(s.disk_write_bytes_per_s, 4000u * 512 / 2);
  EXPECT_DOUBLE_EQ(*s.disk_busy_pct, 75.0);  // nvme0n1: 1500 ms of 2000
}

TEST(FixtureHostSample, WithoutSysBlockPartitionsAreSkippedByName) {
  FixtureTree tree;
  HostSource c(tree.proc(), tree.root_for_test_missing_sys());
  c.sample(0.0);
  tree.write("proc/diskstats", disk_line(8, 0, "sda", 12000, 20000, 1500) +
                                   disk_line(8, 1, "sda1", 12000, 20000, 1500));
  gd::HostSample s = c.sample(1.0);
  EXPECT_EQ(s.disk_read_bytes_per_s, 2000u * 512);
}

TEST(FixtureHostSample, MissingFilesGiveUnknownNotZero) {
  FixtureTree tree;
  tree.remove("proc/meminfo");
  tree.remove("proc/pressure");
  tree.remove("proc/loadavg");
  HostSource c(tree.proc(), tree.sys());
  c.sample(1.0);
  tree.write("proc/stat",
             "cpu  1100 0 500 8100 300 0 50 150 0 0\nbtime 1700000000\n");
  gd::HostSample s = c.sample(2.0);
  EXPECT_FALSE(s.mem_available_bytes);
  EXPECT_FALSE(s.swap_used_bytes);
  EXPECT_FALSE(s.load1);
  EXPECT_FALSE(s.psi_cpu_some_pct);
  EXPECT_EQ(s.cpu_util_pct, 50.0);  // stat is still there
}
