// Kernel-log lines are capped where read: a 1 MiB line (or a file that
// never ends its line) keeps 4 KiB of text in the event and in memory.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/text_cap.h"
#include "kernellog/kernel_log.h"

using gd::KernelLogSource;
using gd::kKernelLineMax;
using gd::PciIndex;

namespace {

std::string temp_log(const std::string& text) {
  char tmpl[] = "/tmp/gd_kernellog_cap_XXXXXX";
  int fd = mkstemp(tmpl);
  close(fd);
  std::ofstream(tmpl, std::ios::binary) << text;
  return tmpl;
}

const std::string kOomHead =
    "[  11.0] Out of memory: Killed process 4242 (python) ";

}  // namespace

TEST(KernelLogLineCap, HugeLineIsCutWithACountedMarker) {
  std::string line = kOomHead + std::string(1 << 20, 'y');
  auto e = gd::parse_kernel_log_line(line, PciIndex());
  ASSERT_TRUE(e);
  EXPECT_EQ(e->pid, 4242u);
  std::string marker =
      "…[truncated " + std::to_string(line.size() - kKernelLineMax) + " bytes]";
  EXPECT_EQ(e->text.size(), kKernelLineMax + marker.size());
  EXPECT_TRUE(e->text.ends_with(marker)) << e->text.substr(kKernelLineMax);
}

TEST(KernelLogLineCap, HugeLineInAFollowedFileIsCapped) {
  std::string path =
      temp_log(kOomHead + std::string(1 << 20, 'y') + "\n" + kOomHead + "\n");
  KernelLogSource src(path, /*from_start=*/true);
  ASSERT_TRUE(src.ok()) << src.error();
  auto events = src.poll(PciIndex());
  std::filesystem::remove(path);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_LT(events[0].text.size(), kKernelLineMax + 64);
  EXPECT_NE(events[0].text.find("…[truncated "), std::string::npos);
  EXPECT_EQ(events[1].text, kOomHead.substr(0, kOomHead.size() - 1));
}
