// line_uptime_s: the seconds-since-boot stamp of a kernel-log line, and
// KernelLogSource::skip_before_uptime (check --since) built on it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "kernellog/kernel_log.h"
#include "kernellog/log_line_prefix.h"

namespace {

using gd::kernellog::line_uptime_s;

TEST(LineUptime, KmsgDmesgAndSyslogStamps) {
  EXPECT_DOUBLE_EQ(*line_uptime_s("6,1234,5678901,-;NVRM: x"), 5.678901);
  EXPECT_DOUBLE_EQ(*line_uptime_s("[  123.456789] NVRM: x"), 123.456789);
  EXPECT_DOUBLE_EQ(
      *line_uptime_s("Dec  2 11:38:47 worker4 kernel: [  219.5] NVRM: x"),
      219.5);
  EXPECT_FALSE(line_uptime_s("[Fri Aug 30 11:43:09 2024] NVRM: x"));
  EXPECT_FALSE(line_uptime_s("Jun 30 11:07:05 host kernel: NVRM: x"));
  EXPECT_FALSE(line_uptime_s("NVRM: Xid (PCI:0000:07:00): 79"));
  EXPECT_FALSE(line_uptime_s("[] x"));
}

TEST(LineUptime, SourceSkipsStampedLinesBeforeTheTimeAndKeepsUnstamped) {
  char tmpl[] = "/tmp/gd_uptime_XXXXXX";
  close(mkstemp(tmpl));
  std::ofstream(tmpl)
      << "[  10.0] NVRM: Xid (PCI:0000:07:00): 79, pid=1, name=x, GPU has "
         "fallen off the bus.\n"
         "[  50.0] NVRM: Xid (PCI:0000:07:00): 48, pid=1, name=x, DBE\n"
         "NVRM: Xid (PCI:0000:07:00): 13, pid=1, name=x, Graphics\n";
  gd::PciIndex pci;
  pci.add("00000000:07:00.0", 0);
  gd::KernelLogSource log(tmpl, true);
  log.skip_before_uptime(20);
  auto events = log.poll(pci);
  std::filesystem::remove(tmpl);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].code, 48);
  EXPECT_EQ(events[1].code, 13);
}

}  // namespace
