#include "common/long_run_memory.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

namespace gd {
namespace {

// One mapping of a smaps text, with the fields that decide.
std::string mapping(const std::string& header, int anonymous = 0,
                    int private_dirty = 0) {
  std::ostringstream o;
  o << header << "\n"
    << "Size:                 64 kB\n"
    << "Rss:                  64 kB\n"
    << "Shared_Clean:          0 kB\n"
    << "Shared_Dirty:          0 kB\n"
    << "Private_Clean:        64 kB\n"
    << "Private_Dirty:  " << private_dirty << " kB\n"
    << "Anonymous:      " << anonymous << " kB\n"
    << "VmFlags: rd ex mr mw me\n";
  return o.str();
}

TEST(CleanCodeMappings, ListsOnlyUnwrittenCodeOfAFile) {
  std::string smaps =
      mapping(
          "55d0c8a00000-55d0c8a10000 r--p 00000000 08:01 1234   /usr/bin/x") +
      mapping(
          "55d0c8a10000-55d0c8b00000 r-xp 00010000 08:01 1234   /usr/bin/x") +
      mapping(
          "55d0c8b00000-55d0c8b10000 rw-p 00100000 08:01 1234   /usr/bin/x") +
      // A debugger's breakpoint, or code relocated where it lies: a page
      // of the code is the process's own (copied on write, anonymous).
      mapping("7f0000000000-7f0000010000 r-xp 00000000 08:01 99 /lib/a.so", 4) +
      // Written to the file but not yet to the disk (a binary just built):
      // still the file's pages.
      mapping("7f0000010000-7f0000020000 r-xp 00000000 08:01 98 /lib/b.so", 0,
              64) +
      // Code made at run time, and the kernel's: no file to read back from.
      mapping("7f0000030000-7f0000040000 r-xp 00000000 00:00 0") +
      mapping("7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0   [vdso]") +
      // A path with spaces.
      mapping(
          "7f0000050000-7f0000060000 r-xp 00000000 08:01 96 /opt/my lib/d.so");
  auto m = clean_code_mappings(smaps);
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].start, 0x55d0c8a10000u);
  EXPECT_EQ(m[0].end, 0x55d0c8b00000u);
  EXPECT_EQ(m[1].start, 0x7f0000010000u);
  EXPECT_EQ(m[2].start, 0x7f0000050000u);
  EXPECT_EQ(m[2].end, 0x7f0000060000u);
}

TEST(CleanCodeMappings, AMissingOrUnreadableAnonymousCountsAsWritten) {
  std::string smaps =
      "7f0000000000-7f0000010000 r-xp 00000000 08:01 99 /lib/a.so\n"
      "Anonymous:  lots kB\n"
      "7f0000010000-7f0000020000 r-xp 00000000 08:01 98 /lib/b.so\n"
      "Anonymous:  0 kB\n"
      "7f0000020000-7f0000030000 r-xp 00000000 08:01 97 /lib/c.so\n"
      "Rss:  4 kB\n";
  auto m = clean_code_mappings(smaps);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].start, 0x7f0000010000u);
}

TEST(CleanCodeMappings, MalformedHeadersAreSkipped) {
  std::string smaps =
      "zz-7f0000010000 r-xp 00000000 08:01 99 /lib/a.so\n"
      "7f0000020000-7f0000010000 r-xp 00000000 08:01 99 /lib/a.so\n"
      "7f0000010000 r-xp 00000000 08:01 99 /lib/a.so\n"
      "garbage\n"
      "\n"
      "7f0000030000-7f0000040000 r-xp 00000000 08:01 98 /lib/b.so\n"
      "Anonymous: 0 kB";
  auto m = clean_code_mappings(smaps);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].start, 0x7f0000030000u);
  EXPECT_TRUE(clean_code_mappings("").empty());
}

std::string self_smaps() {
  std::ifstream f("/proc/self/smaps");
  std::stringstream text;
  text << f.rdbuf();
  return text.str();
}

// The resident KiB of this process's code mappings that may be let go of.
uint64_t resident_code_kib() {
  const std::string s = self_smaps();
  uint64_t kib = 0;
  for (const CodeMapping& m : clean_code_mappings(s)) {
    char header[64];
    std::snprintf(header, sizeof header, "%lx-%lx ",
                  static_cast<unsigned long>(m.start),
                  static_cast<unsigned long>(m.end));
    size_t at = s.find(header);
    size_t rss = s.find("\nRss:", at);
    if (at == std::string::npos || rss == std::string::npos) continue;
    kib += std::stoull(s.substr(rss + 5));
  }
  return kib;
}

struct Shape {
  virtual ~Shape() = default;
  virtual int sides() const = 0;
};
struct Square : Shape {
  int sides() const override { return 4; }
};
std::string g_written = "written before";  // data, not code: kept

TEST(DropCodePages, LetsGoOfCodeAndKeepsWhatTheProcessWrote) {
  // This test's own code is among the mappings found.
  const auto here = reinterpret_cast<uintptr_t>(&resident_code_kib);
  bool found = false;
  for (const CodeMapping& m : clean_code_mappings(self_smaps()))
    found = found || (m.start <= here && here < m.end);
  EXPECT_TRUE(found);

  const uint64_t before = resident_code_kib();
  g_written += ", still there";
  std::unique_ptr<Shape> shape = std::make_unique<Square>();
  EXPECT_GT(drop_code_pages(), 0u);
  const uint64_t after = resident_code_kib();
  EXPECT_LT(after, before);
  // Code runs again (its pages come back from the file), relocated data
  // (the vtable) and written data are untouched.
  EXPECT_EQ(shape->sides(), 4);
  EXPECT_EQ(g_written, "written before, still there");
}

}  // namespace
}  // namespace gd
