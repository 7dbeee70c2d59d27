// Unit tests of the per-file /proc parsers, on text in the kernel's formats.
#include <gtest/gtest.h>

#include "procfs/cpu_stat.h"
#include "procfs/diskstats.h"
#include "procfs/host_facts.h"
#include "procfs/loadavg.h"
#include "procfs/meminfo.h"
#include "procfs/pressure.h"
#include "procfs/process_files.h"
#include "procfs/vmstat.h"

using namespace gd::procfs;
using namespace std::string_literals;

TEST(ProcStatParser, ReadsAggregateCpuLineAndBootTime) {
  ProcStat s = parse_proc_stat(
      "cpu  10 1 20 300 4 5 6 7 0 0\ncpu0 9 9 9 9 9 9 9 9 0 0\nbtime "
      "1700000000\n");
  ASSERT_TRUE(s.cpu);
  EXPECT_EQ(s.cpu->user, 10u);
  EXPECT_EQ(s.cpu->nice, 1u);
  EXPECT_EQ(s.cpu->idle, 300u);
  EXPECT_EQ(s.cpu->iowait, 4u);
  EXPECT_EQ(s.cpu->steal, 7u);
  EXPECT_EQ(s.btime, 1700000000u);
}

TEST(ProcStatParser, CpuPercentSplitsBusyIowaitAndSteal) {
  CpuTimes a{100, 0, 100, 1000, 0, 0, 0, 0};
  CpuTimes b{160, 0, 120, 1100,
             10,  0, 0,   10};  // busy 80, idle 100, iowait 10, steal 10
  auto p = cpu_percent_between(a, b);
  ASSERT_TRUE(p);
  EXPECT_DOUBLE_EQ(p->util, 40.0);
  EXPECT_DOUBLE_EQ(p->iowait, 5.0);
  EXPECT_DOUBLE_EQ(p->steal, 5.0);
}

TEST(ProcStatParser, IowaitGoingBackwardsIsNotNegative) {
  CpuTimes a{100, 0, 0, 100, 50, 0, 0, 0};
  CpuTimes b{150, 0, 0, 150, 40, 0, 0, 0};
  auto p = cpu_percent_between(a, b);
  ASSERT_TRUE(p);
  EXPECT_DOUBLE_EQ(p->iowait, 0.0);
  EXPECT_DOUBLE_EQ(p->util, 50.0);
  EXPECT_FALSE(cpu_percent_between(a, a));  // no time passed
}

TEST(MeminfoParser, ConvertsKibToBytesAndComputesSwapUsed) {
  MemInfo m = parse_meminfo(
      "MemTotal:       1000 kB\nMemFree: 10 kB\nMemAvailable:    600 kB\n"
      "SwapTotal:       300 kB\nSwapFree:        100 kB\nHugePages_Total:   "
      "4\n");
  EXPECT_EQ(m.mem_total_bytes, 1000u * 1024);
  EXPECT_EQ(m.mem_available_bytes, 600u * 1024);
  EXPECT_EQ(m.swap_used_bytes(), 200u * 1024);
}

TEST(MeminfoParser, MissingMemAvailableStaysUnknown) {
  MemInfo m = parse_meminfo("MemTotal: 1000 kB\n");  // kernels before 3.14
  EXPECT_FALSE(m.mem_available_bytes);
  EXPECT_FALSE(m.swap_used_bytes());
}

TEST(VmstatParser, ReadsSwapPageCounters) {
  SwapCounters c =
      parse_vmstat("pgpgin 5\npswpin 17\npswpout 23\npswpinx 99\n");
  EXPECT_EQ(c.pswpin, 17u);
  EXPECT_EQ(c.pswpout, 23u);
}

TEST(DiskstatsParser, ReadsSectorsAndIoTicks) {
  auto d = parse_diskstats(
      "   8       0 sda 10 0 2048 5 20 0 4096 8 0 700 13 0 0 0 0\n"
      " 259       0 nvme0n1 1 2 3 4 5 6 7 8 9 10 11\n"
      "garbage line\n");
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].name, "sda");
  EXPECT_EQ(d[0].sectors_read, 2048u);
  EXPECT_EQ(d[0].sectors_written, 4096u);
  EXPECT_EQ(d[0].io_ticks_ms, 700u);
  EXPECT_EQ(d[1].io_ticks_ms, 10u);  // pre-4.18 format with 11 columns
}

TEST(DiskstatsParser, SkipsStackedVirtualDevicesAndPartitions) {
  for (const char* n : {"loop0", "ram1", "zram0", "dm-0", "md127", "sr0"})
    EXPECT_TRUE(is_virtual_or_stacked_disk(n)) << n;
  for (const char* n : {"sda", "nvme0n1", "vdb", "xvda"})
    EXPECT_FALSE(is_virtual_or_stacked_disk(n)) << n;
  for (const char* n : {"sda1", "nvme0n1p2", "mmcblk0p1", "xvda1", "vdb3"})
    EXPECT_TRUE(looks_like_partition(n)) << n;
  for (const char* n : {"sda", "nvme0n1", "mmcblk0", "xvda"})
    EXPECT_FALSE(looks_like_partition(n)) << n;
}

TEST(DiskstatsParser, RatesReportBusiestDisk) {
  std::vector<DiskCounters> a{{"sda", 0, 0, 0}, {"sdb", 0, 0, 0}};
  std::vector<DiskCounters> b{{"sda", 2000, 1000, 500}, {"sdb", 0, 4000, 1500}};
  auto r = disk_rates_between(a, b, 2.0);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->read_bytes_per_s, 2000u * 512 / 2);
  EXPECT_EQ(r->write_bytes_per_s, 5000u * 512 / 2);
  EXPECT_DOUBLE_EQ(r->busiest_pct, 75.0);
}

TEST(LoadavgParser, ReadsOneMinuteLoad) {
  EXPECT_EQ(parse_loadavg1("52.10 40.00 30.00 3/456 789\n"), 52.1);
  EXPECT_FALSE(parse_loadavg1(""));
  EXPECT_EQ(parse_loadavg_last_pid("52.10 40.00 30.00 3/456 789\n"), 789u);
  EXPECT_FALSE(parse_loadavg_last_pid("52.10 40.00 30.00 3/456\n"));
  EXPECT_FALSE(parse_loadavg_last_pid("52.10 40.00 30.00 3/456 x\n"));
}

TEST(PressureParser, ReadsSomeAvg10NotFull) {
  EXPECT_EQ(parse_psi_some_avg10(
                "some avg10=1.70 avg60=0.61 avg300=0.24 total=6791588\n"
                "full avg10=9.00 avg60=0.00 avg300=0.00 total=0\n"),
            1.70);
  EXPECT_EQ(parse_psi_some_avg10(
                "full avg10=9.00 avg60=0.00 avg300=0.00 total=0\n"
                "some avg10=0.00 avg60=0.61 avg300=0.24 total=6791588\n"),
            0.0);
  EXPECT_FALSE(parse_psi_some_avg10("full avg10=9.00\n"));
}

TEST(CpuinfoParser, CountsProcessorsAndTakesModelName) {
  CpuInfo c = parse_cpuinfo(
      "processor\t: 0\nmodel name\t: AMD EPYC 7763 64-Core Processor\n\n"
      "processor\t: 1\nmodel name\t: AMD EPYC 7763 64-Core Processor\n\n");
  EXPECT_EQ(c.model, "AMD EPYC 7763 64-Core Processor");
  EXPECT_EQ(c.processors, 2);
}

TEST(CpuinfoParser, Arm64WithoutModelNameFallsBackToHardware) {
  CpuInfo c = parse_cpuinfo(
      "processor\t: 0\nBogoMIPS\t: 50.00\nCPU part\t: 0xd0c\n\n"
      "Hardware\t: NVIDIA Grace\n");
  EXPECT_EQ(c.model, "NVIDIA Grace");
  EXPECT_EQ(c.processors, 1);
}

TEST(PidNamespace, InitialInodeMeansHostOtherMeansContainer) {
  EXPECT_EQ(parse_ns_link("pid:[4026531836]"), 4026531836ull);
  EXPECT_FALSE(parse_ns_link("pid:4026531836"));
  EXPECT_EQ(decide_pid_namespace(4026531836ull, 1), "host");
  EXPECT_EQ(decide_pid_namespace(4026532999ull, 1), "container");
  // NSpid with two entries: nested below the /proc mount's namespace.
  EXPECT_EQ(decide_pid_namespace(std::nullopt, 2), "container");
  EXPECT_EQ(decide_pid_namespace(4026531836ull, 2), "container");
  EXPECT_EQ(decide_pid_namespace(std::nullopt, 1), "");
  EXPECT_EQ(parse_nspid_depth("Name:\tx\nNSpid:\t5015\t12\t1\n"), 3);
}

TEST(PidStatParser, CommWithSpacesAndParenthesesIsSplitAtLastParen) {
  auto s = parse_pid_stat(
      "1002 (my (weird) name)) S 1000 1002 1002 0 -1 4194560 1000 0 5 0 10 3 0 "
      "0 20 0 "
      "2 0 12401 123456789 1000 18446744073709551615 1 1 0\n");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->comm, "my (weird) name)");
  EXPECT_EQ(s->state, 'S');
  EXPECT_EQ(s->ppid, 1000u);
  EXPECT_EQ(s->utime, 10u);
  EXPECT_EQ(s->stime, 3u);
  EXPECT_EQ(s->num_threads, 2);
  EXPECT_EQ(s->starttime, 12401u);
  EXPECT_EQ(s->rss_pages, 1000u);
}

TEST(PidStatParser, TruncatedStatIsRejected) {
  EXPECT_FALSE(parse_pid_stat("1 (init) S 0 1 1"));
  EXPECT_FALSE(parse_pid_stat("no parens here"));
}

TEST(StatusParser, ReadsEffectiveUid) {
  EXPECT_EQ(
      parse_status_euid("Name:\tx\nUid:\t1000\t0\t0\t0\nGid:\t5\t5\t5\t5\n"),
      0u);
  EXPECT_FALSE(parse_status_euid("Name:\tx\n"));
}

TEST(CmdlineParser, NulsBecomeSpacesAndTrailingOnesGo) {
  EXPECT_EQ(cmdline_from_raw("python\0train.py\0--bs\0"
                             "256\0"s),
            "python train.py --bs 256");
  EXPECT_EQ(cmdline_from_raw(""), "");
  EXPECT_EQ(cmdline_from_raw("nginx: worker process\0\0\0"s),
            "nginx: worker process");
}

TEST(CgroupParser, PrefersV2LineOverV1) {
  EXPECT_EQ(parse_cgroup("12:cpuset:/\n1:name=systemd:/user.slice/a.scope\n0::/"
                         "user.slice/b.scope\n"),
            "/user.slice/b.scope");
  EXPECT_EQ(parse_cgroup("0::/kubepods/burstable/pod1a2b/3c4d\n"),
            "/kubepods/burstable/pod1a2b/3c4d");
}

TEST(CgroupParser, V1OnlyTakesFirstPath) {
  EXPECT_EQ(parse_cgroup("12:cpuset:/docker/abc\n11:memory:/docker/def\n"),
            "/docker/abc");
  EXPECT_FALSE(parse_cgroup(""));
}

TEST(MapsParser, FindsCudaLibraryFileNamesOnly) {
  auto libs = parse_maps_cuda_libs(
      "7f00-7f01 r-xp 00000000 fd:01 1 "
      "/usr/local/cuda/lib64/libcudart.so.12.1.105\n"
      "7f01-7f02 r--p 00001000 fd:01 1 "
      "/usr/local/cuda/lib64/libcudart.so.12.1.105\n"
      "7f02-7f03 r-xp 00000000 fd:01 2 /usr/lib/libcuda.so.535.129.03\n"
      "7f03-7f04 r-xp 00000000 fd:01 3 /usr/lib/libcudadebugger.so.1\n"
      "7f04-7f05 r-xp 00000000 fd:01 4 /usr/lib/libc.so.6\n"
      "7f05-7f06 r-xp 00000000 fd:01 5 "
      "/site-packages/torch/lib/libcudart-d0da41ae.so.11.0\n"
      "7f06-7f07 r-xp 00000000 fd:01 6 "
      "/site-packages/nvidia/cudnn/lib/libcudnn_cnn_infer.so.8\n"
      "7f07-7f08 r-xp 00000000 fd:01 7 /lib/libnvrtc-builtins.so.12.1\n"
      "7f08-7f09 rw-p 00000000 00:00 0 [heap]\n");
  EXPECT_EQ(libs, (std::vector<std::string>{
                      "libcuda.so.535.129.03", "libcudart-d0da41ae.so.11.0",
                      "libcudart.so.12.1.105", "libcudnn_cnn_infer.so.8"}));
}

TEST(ChildrenParser, ReadsSpaceSeparatedPids) {
  std::vector<uint32_t> out{7};
  parse_pid_list("123 456 \n", out);
  EXPECT_EQ(out, (std::vector<uint32_t>{7, 123, 456}));
}

TEST(SchedstatParser, ReadsThreeCountersAndRejectsZerosAndJunk) {
  auto s = parse_schedstat("826291 1200 3\n");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->run_ns, 826291u);
  EXPECT_EQ(s->wait_ns, 1200u);
  EXPECT_EQ(s->timeslices, 3u);
  EXPECT_FALSE(parse_schedstat("0 0 0\n"))
      << "CONFIG_SCHED_INFO=n prints zeros";
  EXPECT_FALSE(parse_schedstat("826291 1200\n"));
  EXPECT_FALSE(parse_schedstat("abc 1 2\n"));
}
