// /proc text libFuzzer found mishandled (tests/fuzz/procfs_fuzz); each
// reproducer is also in the fuzz seed corpus.
#include <gtest/gtest.h>

#include <string>

#include "procfs/cpu_stat.h"
#include "procfs/diskstats.h"
#include "procfs/loadavg.h"
#include "procfs/pressure.h"
#include "procfs/process_files.h"

using namespace gd::procfs;

// from_chars reads "-1", "inf" and "nan" as numbers; a load or a PSI share
// is none of them, and a PSI share is at most 100%.
TEST(ProcParserFuzzRegression, LoadAndPressureAreFiniteAndInRange) {
  EXPECT_FALSE(parse_loadavg1("-1 0.80 0.50 3/456 7890\n"));
  EXPECT_FALSE(parse_loadavg1("inf 0.80 0.50 3/456 7890\n"));
  EXPECT_FALSE(parse_loadavg1("nan 0.80 0.50 3/456 7890\n"));
  EXPECT_FALSE(
      parse_psi_some_avg10("some avg10=500.00 avg60=0 avg300=0 total=0\n"));
  EXPECT_FALSE(
      parse_psi_some_avg10("some avg10=-2.00 avg60=0 avg300=0 total=0\n"));
  EXPECT_FALSE(
      parse_psi_some_avg10("some avg10=nan avg60=0 avg300=0 total=0\n"));
  EXPECT_EQ(
      parse_psi_some_avg10("some avg10=100.00 avg60=0 avg300=0 total=0\n"),
      100.0);
}

// A thread count beyond int wrapped to a negative number of threads.
TEST(ProcParserFuzzRegression, StatThreadCountOutOfRangeIsRejected) {
  const std::string head =
      "1002 (python) S 1000 1002 1002 0 -1 4194560 1000 0 5 0 10 0 0 0 20 0 ";
  const std::string tail = " 0 12401 123456789 1000\n";
  EXPECT_FALSE(parse_pid_stat(head + "4294967295" + tail));
  EXPECT_FALSE(parse_pid_stat(head + "-3" + tail));
  auto ok = parse_pid_stat(head + "2" + tail);
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->num_threads, 2);
}

// Counters near 2^64 wrapped the uint64_t sum of busy time, giving shares
// far above 100%.
TEST(ProcParserFuzzRegression, CpuSharesStayWithinHundredPercent) {
  auto st = parse_proc_stat("cpu  18446744073709551606 0 0 20 0 0 0 0 0 0\n");
  ASSERT_TRUE(st.cpu);
  auto p = cpu_percent_between(CpuTimes{}, *st.cpu);
  ASSERT_TRUE(p);
  EXPECT_LE(p->util, 100.0);
  EXPECT_GE(p->util, 0.0);
  EXPECT_LE(p->iowait, 100.0);
}

// A rate above 2^64 bytes/s was converted from double to uint64_t, which is
// undefined behaviour (UBSan: "outside the range of representable values").
TEST(ProcParserFuzzRegression, HugeDiskCounterJumpSaturates) {
  auto before = parse_diskstats("   8 0 sda 0 0 0 0 0 0 0 0 0 0 0\n");
  auto after =
      parse_diskstats("   8 0 sda 0 0 18446744073709551615 0 0 0 0 0 0 0 0\n");
  ASSERT_EQ(after.size(), 1u);
  auto r = disk_rates_between(before, after, 0.001);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->read_bytes_per_s, 18446744073709549568ull);
}

// A comm holding ')' followed by NULs left a NUL where the state letter
// belongs; such a stat line is not a process's.
TEST(ProcParserFuzzRegression, StatStateIsALetter) {
  const std::string tail =
      " 1 1000 1000 0 -1 4194560 1000 0 5 0 500 100 0 0 20 0 1 0 17 1 0 0\n";
  EXPECT_FALSE(parse_pid_stat(std::string("100 (x\0\0)") +
                              std::string(1, '\0') + " S" + tail));
  EXPECT_FALSE(parse_pid_stat("100 (x) 5" + tail));
  auto ok = parse_pid_stat("100 (x) S" + tail);
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->state, 'S');
}

// One huge counter: 100 * x / x rounded to just above 100%.
TEST(ProcParserFuzzRegression, CpuShareOfOneHugeCounterIsAtMost100) {
  const ProcStat st = parse_proc_stat("cpu  00006277054781563129 \n");
  ASSERT_TRUE(st.cpu);
  auto p = cpu_percent_between(CpuTimes{}, *st.cpu);
  ASSERT_TRUE(p);
  EXPECT_LE(p->util, 100.0);
  EXPECT_GE(p->util, 99.999);
}
