// KeptFile: /proc files read through a descriptor kept between samples.
#include "procfs/kept_file.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using gd::procfs::KeptFile;

namespace {

constexpr auto kShortRead = KeptFile::Ending::kShortRead;
constexpr auto kZeroRead = KeptFile::Ending::kZeroRead;

std::string stat_path(pid_t pid) {
  return "/proc/" + std::to_string(pid) + "/stat";
}

}  // namespace

TEST(KeptFile, ProcFileIsKeptAndRereadWithFreshContents) {
  size_t before = gd::procfs::kept_file_count();
  KeptFile f;
  std::string text;
  ASSERT_TRUE(f.read("/proc/self/schedstat", text, kShortRead));
  EXPECT_TRUE(f.pins_process());
  EXPECT_EQ(gd::procfs::kept_file_count(), before + 1);
  std::string first = text;
  // Burn 20 ms of CPU: the on-CPU nanoseconds (first field) must move.
  auto thread_cpu = [] {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) +
           static_cast<double>(ts.tv_nsec) / 1e9;
  };
  volatile uint64_t x = 0;
  for (double start = thread_cpu(); thread_cpu() - start < 0.02;) x = x + 1;
  ASSERT_TRUE(f.read("/this/path/is/not/used/any/more", text, kShortRead));
  EXPECT_NE(text, first)
      << "the kept descriptor must show the current contents";
  EXPECT_GT(std::stoull(text.substr(0, text.find(' '))), std::stoull(first));
  f.close();
  EXPECT_EQ(gd::procfs::kept_file_count(), before);
}

TEST(KeptFile, ReadFailsOnceItsProcessIsGone) {
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    pause();
    _exit(0);
  }
  KeptFile f;
  std::string text;
  ASSERT_TRUE(f.read(stat_path(pid).c_str(), text, kShortRead));
  EXPECT_NE(text.find("("), std::string::npos);
  EXPECT_TRUE(f.pins_process());
  kill(pid, SIGKILL);
  ASSERT_EQ(waitpid(pid, nullptr, 0), pid);
  EXPECT_FALSE(f.read(stat_path(pid).c_str(), text, kShortRead));
  EXPECT_FALSE(f.pins_process())
      << "the descriptor is closed once its process is gone";
}

TEST(KeptFile, RegularFilesAreNotKeptSoReplacingThemIsSeen) {
  char tmpl[] = "/tmp/gd_kept_file_XXXXXX";
  std::string dir = mkdtemp(tmpl);
  std::string path = dir + "/stat";
  std::ofstream(path) << "one\n";
  KeptFile f;
  std::string text;
  ASSERT_TRUE(f.read(path.c_str(), text, kZeroRead));
  EXPECT_EQ(text, "one\n");
  EXPECT_FALSE(f.pins_process());
  // Replaced, not rewritten: a kept descriptor would still show "one".
  std::ofstream(path + ".new") << "two\n";
  std::filesystem::rename(path + ".new", path);
  ASSERT_TRUE(f.read(path.c_str(), text, kZeroRead));
  EXPECT_EQ(text, "two\n");
  std::filesystem::remove(path);
  EXPECT_FALSE(f.read(path.c_str(), text, kZeroRead));
  std::filesystem::remove_all(dir);
}

TEST(KeptFile, AFixtureTreesProcessFilesAreNotKeptBesideProcs) {
  // Whether a process's file is on procfs is asked once per tree: /proc's
  // answer must not carry over to a fixture tree's pid directories, nor
  // the fixture's to /proc.
  char tmpl[] = "/tmp/gd_kept_tree_XXXXXX";
  std::string root = mkdtemp(tmpl);
  std::filesystem::create_directories(root + "/42");
  std::filesystem::create_directories(root + "/43");
  std::ofstream(root + "/42/stat") << "42 (a) S\n";
  std::ofstream(root + "/43/stat") << "43 (b) S\n";
  std::string text;
  for (int round = 0; round < 2; ++round) {
    KeptFile proc_file, fixture_a, fixture_b;
    ASSERT_TRUE(proc_file.read(stat_path(getpid()).c_str(), text, kShortRead));
    EXPECT_TRUE(proc_file.pins_process());
    ASSERT_TRUE(fixture_a.read((root + "/42/stat").c_str(), text, kShortRead));
    EXPECT_FALSE(fixture_a.pins_process());
    ASSERT_TRUE(fixture_b.read((root + "/43/stat").c_str(), text, kShortRead));
    EXPECT_FALSE(fixture_b.pins_process());
  }
  std::filesystem::remove_all(root);
}

TEST(KeptFile, LongFileIsReadWhole) {
  // More than one read's worth (16 KiB), through both endings.
  char tmpl[] = "/tmp/gd_kept_file_XXXXXX";
  std::string dir = mkdtemp(tmpl);
  std::string path = dir + "/big";
  std::string big(40000, 'x');
  big[16384] = 'y';
  std::ofstream(path) << big;
  for (auto ending : {kShortRead, kZeroRead}) {
    KeptFile f;
    std::string text;
    ASSERT_TRUE(f.read(path.c_str(), text, ending));
    EXPECT_EQ(text, big);
  }
  std::filesystem::remove_all(dir);
}

TEST(KeptFile, MovedFromFileNoLongerOwnsTheDescriptor) {
  size_t before = gd::procfs::kept_file_count();
  {
    KeptFile a;
    std::string text;
    ASSERT_TRUE(a.read("/proc/self/stat", text, kShortRead));
    KeptFile b = std::move(a);
    EXPECT_FALSE(a.pins_process());
    EXPECT_TRUE(b.pins_process());
    KeptFile c;
    c = std::move(b);
    EXPECT_TRUE(c.pins_process());
    EXPECT_EQ(gd::procfs::kept_file_count(), before + 1);
  }
  EXPECT_EQ(gd::procfs::kept_file_count(), before) << "closed exactly once";
}

TEST(KeptFile, ChildrenListLongerThanAPageIsReadWhole) {
  // Enough children to print more than 4 KiB ("1234 " each): procfs splits
  // the list across reads, and kShortPidList must not stop after the first.
  std::string path = "/proc/" + std::to_string(getpid()) + "/task/" +
                     std::to_string(getpid()) + "/children";
  std::vector<pid_t> kids;
  std::string listed;
  while (kids.size() < 4000) {
    for (int i = 0; i < 100; ++i) {
      pid_t pid = fork();
      ASSERT_GE(pid, 0);
      if (pid == 0) {
        pause();
        _exit(0);
      }
      kids.push_back(pid);
    }
    KeptFile probe;
    ASSERT_TRUE(probe.read(path.c_str(), listed, KeptFile::Ending::kZeroRead));
    if (listed.size() > 5000) break;
  }
  KeptFile short_list, zero;
  std::string a, b;
  bool read_a =
      short_list.read(path.c_str(), a, KeptFile::Ending::kShortPidList);
  bool read_b = zero.read(path.c_str(), b, KeptFile::Ending::kZeroRead);
  // Read again through the kept descriptors: the same whole list.
  std::string a2;
  bool read_a2 =
      short_list.read(path.c_str(), a2, KeptFile::Ending::kShortPidList);
  for (pid_t pid : kids) kill(pid, SIGKILL);
  for (pid_t pid : kids) waitpid(pid, nullptr, 0);
  ASSERT_TRUE(read_a && read_b && read_a2);
  EXPECT_GT(b.size(), 4096u);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a2, b);
  for (pid_t pid : kids)
    EXPECT_NE(b.find(std::to_string(pid) + " "), std::string::npos);
}

// The descriptor table is grown at start (while the process has one thread)
// to hold the descriptors a first sample keeps open, and no descriptor is
// left open by it. /proc/self/status's FDSize is the table's size.
TEST(KeptFile, TheDescriptorTableIsReservedWithoutADescriptorLeft) {
  auto fd_size = [] {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
      if (line.rfind("FDSize:", 0) == 0) return std::stoul(line.substr(7));
    return 0ul;
  };
  auto open_count = [] {
    size_t n = 0;
    for ([[maybe_unused]] const auto& e :
         std::filesystem::directory_iterator("/proc/self/fd"))
      ++n;
    return n;
  };
  int out[2];
  ASSERT_EQ(pipe(out), 0);
  // In a child of its own: this test process's table may have grown already.
  pid_t child = fork();
  if (child == 0) {
    close(out[0]);
    unsigned long got[4] = {fd_size(), open_count(), 0, 0};
    gd::procfs::raise_open_files_limit();
    gd::procfs::reserve_descriptor_table();
    got[2] = fd_size();
    got[3] = open_count();
    (void)!write(out[1], got, sizeof got);
    _exit(0);
  }
  close(out[1]);
  unsigned long got[4] = {};
  ASSERT_EQ(read(out[0], got, sizeof got), static_cast<ssize_t>(sizeof got));
  close(out[0]);
  waitpid(child, nullptr, 0);
  const unsigned long want = std::min<unsigned long>(
      gd::procfs::kept_file_budget(), gd::procfs::kReservedDescriptors);
  EXPECT_LT(got[0], want) << "the table was that big before: nothing shown";
  EXPECT_GE(got[2], want);
  EXPECT_EQ(got[3], got[1]) << "a descriptor was left open";
}
