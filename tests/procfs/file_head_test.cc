// read_file_head and the environ read on it: at most the cap is read, and a
// file's whole text below the cap, whatever its length against the buffer's
// first 4 KiB and its doublings.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "procfs/process_files.h"
#include "procfs/text_util.h"

namespace {

std::string temp_file_with(const std::string& text) {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("gd_file_head_" + std::to_string(::getpid())))
                         .string();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::string pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + i % 23);
  return s;
}

}  // namespace

TEST(FileHead, ReadsWholeFilesBelowTheCapAtEveryLength) {
  for (size_t n : {0, 1, 4095, 4096, 4097, 8192, 8193, 70000}) {
    const std::string text = pattern(n);
    const std::string path = temp_file_with(text);
    std::string out = "left over";
    ASSERT_TRUE(gd::procfs::read_file_head(path.c_str(), out, 100000)) << n;
    EXPECT_EQ(out, text) << n;
    std::remove(path.c_str());
  }
}

TEST(FileHead, StopsAtTheCap) {
  for (size_t cap : {0, 1, 4096, 5000, 131072}) {
    const std::string text = pattern(cap + 3000);
    const std::string path = temp_file_with(text);
    std::string out;
    ASSERT_TRUE(gd::procfs::read_file_head(path.c_str(), out, cap)) << cap;
    EXPECT_EQ(out, text.substr(0, cap)) << cap;
    std::remove(path.c_str());
  }
}

TEST(FileHead, MissingFileIsFalse) {
  std::string out = "x";
  EXPECT_FALSE(
      gd::procfs::read_file_head("/nonexistent/gd_file_head", out, 16));
}

TEST(FileHead, SlurmJobFoundPastTheFirstBufferButNotPastTheCap) {
  std::string env = "PATH=/usr/bin";
  env.push_back('\0');
  env += "FILLER=" + std::string(9000, 'x');
  env.push_back('\0');
  env += "SLURM_JOB_ID=4242";
  env.push_back('\0');
  std::string path = temp_file_with(env);
  EXPECT_EQ(gd::procfs::read_environ_slurm_job(path.c_str()),
            std::optional<std::string>("4242"));
  std::remove(path.c_str());
  // Past kEnvironReadMax the variable is not read.
  env = "FILLER=" + std::string(gd::procfs::kEnvironReadMax, 'x');
  env.push_back('\0');
  env += "SLURM_JOB_ID=4242";
  env.push_back('\0');
  path = temp_file_with(env);
  EXPECT_EQ(gd::procfs::read_environ_slurm_job(path.c_str()), std::nullopt);
  std::remove(path.c_str());
}
