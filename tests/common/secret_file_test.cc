// A secret's file: its first line, bounded, without control bytes.
#include "common/secret_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>

namespace gd {
namespace {

class SecretFile : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/gd_secret_XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
  }
  void TearDown() override {
    std::remove((dir_ + "/s").c_str());
    rmdir(dir_.c_str());
  }
  std::string write(const std::string& bytes) {
    const std::string path = dir_ + "/s";
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  std::string refusal(const std::string& path) {
    try {
      read_secret_line(path);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  }
  std::string dir_;
};

TEST_F(SecretFile, TheFirstLineWithoutItsLineEnd) {
  EXPECT_EQ(read_secret_line(write("tok\n")), "tok");
  EXPECT_EQ(read_secret_line(write("tok\r\nsecond\n")), "tok");
  EXPECT_EQ(read_secret_line(write("no newline")), "no newline");
  EXPECT_EQ(read_secret_line(write(std::string(4096, 'a') + "\r\n")),
            std::string(4096, 'a'));
}

TEST_F(SecretFile, ControlBytesAreRefused) {
  const std::string path = write("abc\rX-Injected: 1\n");
  EXPECT_EQ(refusal(path),
            path +
                ": the first line holds a control byte (\\r at byte 4), "
                "which a request header cannot carry; write it on one "
                "line ending in a newline");
  EXPECT_NE(refusal(write(std::string("a\0b\n", 4))).find("(\\x00 at byte 2)"),
            std::string::npos);
  EXPECT_NE(refusal(write("a\tb\n")).find("control byte"), std::string::npos);
}

TEST_F(SecretFile, ALongOrEmptyLineIsRefusedWithoutReadingTheRest) {
  const std::string path = write(std::string(4097, 'a') + "\n");
  EXPECT_EQ(refusal(path), path + ": the first line is longer than 4096 bytes");
  EXPECT_EQ(refusal("/dev/zero"),
            "/dev/zero: the first line is longer than 4096 bytes");
  EXPECT_NE(refusal(write("\nsecond\n")).find("the first line is empty"),
            std::string::npos);
  EXPECT_EQ(refusal(dir_ + "/missing"), dir_ + "/missing: cannot read it");
}

}  // namespace
}  // namespace gd
