// parse_kernel_log_line: each log format, Xid fields, OOM lines, non-events.
#include <gtest/gtest.h>

#include "kernellog/kernel_log.h"
#include "kernellog/log_line_prefix.h"

using gd::Event;
using gd::parse_kernel_log_line;
using gd::PciIndex;

namespace {

PciIndex two_gpus() {
  PciIndex pci;
  pci.add("00000000:07:00.0", 0);
  pci.add("00000000:0A:00.0", 1);
  return pci;
}

constexpr const char* kXid79 =
    "NVRM: Xid (PCI:0000:07:00): 79, pid=1234, name=python, GPU has fallen off "
    "the bus.";

}  // namespace

TEST(KernelMessage, StripsEachLogToolsPrefix) {
  using gd::kernellog::kernel_message;
  EXPECT_EQ(kernel_message("[  123.456789] NVRM: x"), "NVRM: x");
  EXPECT_EQ(kernel_message("[Fri Aug 30 11:43:09 2024] NVRM: x"), "NVRM: x");
  EXPECT_EQ(kernel_message("Jun 30 11:07:05 host kernel: NVRM: x"), "NVRM: x");
  EXPECT_EQ(
      kernel_message("Dec  2 11:38:47 worker4 kernel: [  219.470994] NVRM: x"),
      "NVRM: x");
  EXPECT_EQ(kernel_message("kwi 15 07:56:59 testowy kernel: NVRM: x"),
            "NVRM: x");
  EXPECT_EQ(kernel_message("6,1234,5678901,-;NVRM: x"), "NVRM: x");
  EXPECT_EQ(kernel_message("4,99,1,c,caller=T12;NVRM: x"), "NVRM: x");
  EXPECT_EQ(kernel_message("  NVRM: x  "), "NVRM: x");
}

TEST(XidLine, EveryFormatGivesSameCodeGpuAndPid) {
  PciIndex pci = two_gpus();
  for (std::string prefix :
       {"", "[  123.456789] ", "[Fri Aug 30 11:43:09 2024] ",
        "Jun 30 11:07:05 host kernel: ",
        "Dec  2 11:38:47 worker4 kernel: [  219.47] ", "6,1234,5678901,-;"}) {
    auto e = parse_kernel_log_line(prefix + kXid79, pci);
    ASSERT_TRUE(e) << prefix;
    EXPECT_EQ(e->kind, "xid");
    EXPECT_EQ(e->code, 79);
    EXPECT_EQ(e->gpu, 0);
    EXPECT_EQ(e->pid, 1234u);
  }
}

TEST(XidLine, TextIsTrimmedLineWithoutKmsgHeader) {
  PciIndex pci = two_gpus();
  EXPECT_EQ(parse_kernel_log_line(
                std::string("6,1234,5678901,-;") + kXid79 + "\n", pci)
                ->text,
            kXid79);
  std::string dmesg = std::string("[  123.456789] ") + kXid79;
  EXPECT_EQ(parse_kernel_log_line("  " + dmesg + " \n", pci)->text, dmesg);
}

TEST(XidLine, UnknownPidAndMissingPidAreNull) {
  PciIndex pci = two_gpus();
  auto unknown = parse_kernel_log_line(
      "NVRM: Xid (PCI:0000:0a:00): 45, pid='<unknown>', name=<unknown>, Ch "
      "00000008",
      pci);
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->code, 45);
  EXPECT_EQ(unknown->gpu, 1);
  EXPECT_FALSE(unknown->pid);
  auto absent = parse_kernel_log_line(
      "NVRM: Xid (PCI:0000:07:00): 79, GPU has fallen off the bus.", pci);
  ASSERT_TRUE(absent);
  EXPECT_FALSE(absent->pid);
  auto old = parse_kernel_log_line(
      "NVRM: Xid (PCI:0000:07:00): 31, Ch 00000003, engmask 00000101", pci);
  ASSERT_TRUE(old);
  EXPECT_FALSE(old->pid);
}

TEST(XidLine, UnknownPciAddressGivesNullGpu) {
  auto e = parse_kernel_log_line(
      "NVRM: Xid (PCI:0000:99:00): 13, pid=7, name=x, Graphics", two_gpus());
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code, 13);
  EXPECT_FALSE(e->gpu);
  EXPECT_EQ(e->pid, 7u);
}

TEST(XidLine, OldFormatWithoutPciPrefix) {
  auto e = parse_kernel_log_line(
      "[...] NVRM: Xid (0000:07:00): 14, Channel 00000001", two_gpus());
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code, 14);
  EXPECT_EQ(e->gpu, 0);
}

TEST(XidLine, LookalikesAreNotXid) {
  PciIndex pci = two_gpus();
  for (const char* line : {
           "nvidia-nvswitch2: SXid (PCI:0000:07:00.0): 12028, Non-fatal, Link "
           "62",
           "NVRM: GPU 0000:07:00.0: GPU has fallen off the bus.",
           "NVRM: API mismatch: the client has the version 535.54.03, but",
           "NVRM: Xid (PCI:0000:dc:00) garbage",
           "NVRM: Xid (PCI:0000:dc:00): , pid=1",
           "kernel: something caused by previous Xid 149",
           "NVRM: Xid",
           "",
       }) {
    // Some are other events now (sxid, nvrm), none is an Xid.
    auto e = parse_kernel_log_line(line, pci);
    EXPECT_FALSE(e && e->kind == "xid") << line;
  }
}

TEST(OomLine, GlobalAndCgroupKillsGiveOneEventEach) {
  PciIndex pci;
  auto global = parse_kernel_log_line(
      "[ 5000.123] Out of memory: Killed process 1234 (python) total-vm:123kB, "
      "anon-rss:100kB, "
      "file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:10kB oom_score_adj:0",
      pci);
  ASSERT_TRUE(global);
  EXPECT_EQ(global->kind, "oom_kill");
  EXPECT_EQ(global->pid, 1234u);
  EXPECT_FALSE(global->gpu);
  EXPECT_FALSE(global->code);
  EXPECT_NE(global->text.find("Out of memory"), std::string::npos);

  auto cgroup = parse_kernel_log_line(
      "Jun 30 11:07:05 host kernel: Memory cgroup out of memory: Killed "
      "process 4321 (pt_data_worker) "
      "total-vm:1kB",
      pci);
  ASSERT_TRUE(cgroup);
  EXPECT_EQ(cgroup->kind, "oom_kill");
  EXPECT_EQ(cgroup->pid, 4321u);
}

TEST(OomLine, CompanionLinesOfTheSameKillAreIgnored) {
  PciIndex pci;
  for (const char* line : {
           "oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/"
           ",mems_allowed=0,"
           "global_oom,task_memcg=/user.slice,task=python,pid=1234,uid=1000",
           "oom_reaper: reaped process 1234 (python), now anon-rss:0kB, "
           "file-rss:0kB, shmem-rss:0kB",
           "Out of memory: Kill process 1234 (python) score 999 or sacrifice "
           "child",
           "python invoked oom-killer: "
           "gfp_mask=0x100cca(GFP_HIGHUSER_MOVABLE), order=0",
           "systemd-oomd[123]: Killed /user.slice/x.scope due to memory "
           "pressure",
       })
    EXPECT_FALSE(parse_kernel_log_line(line, pci)) << line;
}

TEST(OomLine, OldKernelSecondLineIsTheEvent) {
  // Before 5.0 the kill took two lines; only "Killed process" counts.
  auto e = parse_kernel_log_line(
      "Killed process 1234 (python) total-vm:1kB, anon-rss:1kB", PciIndex());
  ASSERT_TRUE(e);
  EXPECT_EQ(e->pid, 1234u);
}
