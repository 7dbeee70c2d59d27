// KernelLogSource: following a plain file like `tail -f`, and /dev/kmsg.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "kernellog/kernel_log.h"

using gd::KernelLogSource;
using gd::PciIndex;

namespace {

constexpr const char* kXid =
    "[  10.0] NVRM: Xid (PCI:0000:07:00): 79, pid=77, name=x, GPU has fallen "
    "off the bus.\n";
constexpr const char* kOom =
    "[  11.0] Out of memory: Killed process 4242 (python) total-vm:1kB\n";
constexpr const char* kNoise = "[  12.0] e1000e: eth0 NIC Link is Up\n";

class TempLog {
 public:
  TempLog() {
    char tmpl[] = "/tmp/gd_kernellog_XXXXXX";
    int fd = mkstemp(tmpl);
    close(fd);
    path_ = tmpl;
  }
  ~TempLog() { std::filesystem::remove(path_); }
  void append(const std::string& s) const {
    std::ofstream(path_, std::ios::app) << s;
  }
  void replace(const std::string& s) const {
    std::ofstream(path_, std::ios::trunc) << s;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

PciIndex one_gpu() {
  PciIndex pci;
  pci.add("00000000:07:00.0", 3);
  return pci;
}

}  // namespace

TEST(KernelLogFile, FromEndSeesOnlyLinesAppendedLater) {
  TempLog log;
  log.append(kXid);
  KernelLogSource src(log.path(), /*from_start=*/false);
  ASSERT_TRUE(src.ok()) << src.error();
  PciIndex pci = one_gpu();
  EXPECT_TRUE(src.poll(pci).empty());
  log.append(std::string(kNoise) + kOom);
  auto events = src.poll(pci);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, "oom_kill");
  EXPECT_EQ(events[0].pid, 4242u);
  EXPECT_TRUE(src.poll(pci).empty()) << "each line is reported once";
}

TEST(KernelLogFile, FromStartReadsExistingLinesInOrder) {
  TempLog log;
  log.append(std::string(kXid) + kNoise + kOom);
  KernelLogSource src(log.path(), /*from_start=*/true);
  ASSERT_TRUE(src.ok());
  auto events = src.poll(one_gpu());
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].kind, "xid");
  EXPECT_EQ(events[0].gpu, 3);
  EXPECT_EQ(events[0].code, 79);
  EXPECT_EQ(events[0].pid, 77u);
  EXPECT_EQ(events[1].kind, "oom_kill");
}

TEST(KernelLogFile, EventsCarryTheTimeTheKernelStampedThem) {
  TempLog log;
  log.append(std::string(kXid) + "NVRM: Xid (PCI:0000:07:00): 13, no stamp\n");
  KernelLogSource src(log.path(), /*from_start=*/true);
  auto events = src.poll(one_gpu());
  ASSERT_EQ(events.size(), 2u);
  // Boot (now less the monotonic clock) plus the line's 10 s.
  timespec real{}, mono{};
  clock_gettime(CLOCK_REALTIME, &real);
  clock_gettime(CLOCK_MONOTONIC, &mono);
  const double boot = static_cast<double>(real.tv_sec - mono.tv_sec);
  ASSERT_TRUE(events[0].logged_at);
  EXPECT_NEAR(*events[0].logged_at, boot + 10, 2);
  EXPECT_FALSE(events[1].logged_at) << "a line without a stamp has no time";
}

TEST(KernelLogFile, HalfWrittenLineWaitsForItsNewline) {
  TempLog log;
  KernelLogSource src(log.path(), true);
  PciIndex pci = one_gpu();
  std::string xid = kXid;
  log.append(xid.substr(0, 30));
  EXPECT_TRUE(src.poll(pci).empty());
  log.append(xid.substr(30));
  auto events = src.poll(pci);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].code, 79);
  EXPECT_EQ(events[0].text,
            std::string(kXid).substr(0, std::string(kXid).size() - 1));
}

TEST(KernelLogFile, TruncatedFileIsReadAgainFromItsStart) {
  TempLog log;
  log.append(std::string(kNoise) + kNoise + kNoise);
  KernelLogSource src(log.path(), false);
  PciIndex pci = one_gpu();
  log.replace(kOom);  // shorter than before: truncated and rewritten
  auto events = src.poll(pci);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, "oom_kill");
}

TEST(KernelLogFile, RotatedFileIsFollowedByName) {
  TempLog log;
  KernelLogSource src(log.path(), false);
  PciIndex pci = one_gpu();
  log.append(kXid);
  std::filesystem::rename(log.path(), log.path() + ".1");
  log.append(kOom);  // new file under the old name
  auto events = src.poll(pci);
  std::filesystem::remove(log.path() + ".1");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].kind, "xid");
  EXPECT_EQ(events[1].kind, "oom_kill");
}

TEST(KernelLogFile, MissingFileIsNotOkAndSaysWhy) {
  KernelLogSource src("/nonexistent-dir/kern.log");
  EXPECT_FALSE(src.ok());
  EXPECT_NE(src.error().find("/nonexistent-dir/kern.log"), std::string::npos)
      << src.error();
  EXPECT_TRUE(src.poll(PciIndex()).empty());
}

TEST(KernelLogFile, PermissionDeniedIsNotOkAndSaysWhy) {
  TempLog log;
  ASSERT_EQ(chmod(log.path().c_str(), 0), 0);
  // root ignores file modes: check as an unprivileged user in a child.
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(3);
    KernelLogSource src(log.path());
    if (src.ok()) _exit(1);
    if (src.error().find("Permission denied") == std::string::npos) _exit(2);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 3) GTEST_SKIP() << "cannot drop privileges here";
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "1: opened anyway, 2: error text lacks the reason";
}

TEST(KernelLogKmsg, PollingDevKmsgNeverBlocks) {
  KernelLogSource src("/dev/kmsg", /*from_start=*/true);
  if (!src.ok()) GTEST_SKIP() << src.error();
  auto start = std::chrono::steady_clock::now();
  src.poll(PciIndex());  // the whole ring buffer
  src.poll(PciIndex());  // nothing new: must return at once (EAGAIN)
  KernelLogSource tail("/dev/kmsg", /*from_start=*/false);
  ASSERT_TRUE(tail.ok());
  tail.poll(PciIndex());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(KernelLogFile, EveryLineNoParserRecognisedIsCounted) {
  TempLog log;
  KernelLogSource src(log.path(), true);
  EXPECT_EQ(src.unclassified_total(), 0u);
  PciIndex pci = one_gpu();
  // An Xid, a NIC line, an OOM kill, a blank line (nothing to miss), and
  // an AER error of the GPU: its detail lines belong to the event.
  log.append(std::string(kXid) + kNoise + kOom + "\n" +
             "[  13.0] nvidia 0000:07:00.0: PCIe Bus Error: "
             "severity=Corrected, type=Physical Layer, (Receiver ID)\n"
             "[  13.0] nvidia 0000:07:00.0:   device [10de:20b0] error "
             "status/mask=00000001/0000e000\n"
             "[  13.0] nvidia 0000:07:00.0:    [ 0] RxErr\n");
  auto events = src.poll(pci);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[2].kind, "pcie_aer");
  EXPECT_EQ(events[2].gpu, 3);
  EXPECT_EQ(src.unclassified_total(), 1u) << "the NIC line";
  // Cumulative since start, across polls.
  log.append(std::string(kNoise) + kNoise);
  EXPECT_TRUE(src.poll(pci).empty());
  EXPECT_EQ(src.unclassified_total(), 3u);
}
