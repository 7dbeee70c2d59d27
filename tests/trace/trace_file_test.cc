// Whole trace files: writer -> file (plain or zstd) -> reader.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "model_compare.h"
#include "temp_dir.h"
#include "trace/trace_io.h"
#include "trace_fixtures.h"

namespace gd {
namespace {

using testing::expect_same;
using testing::TempDir;

std::vector<Sample> some_samples(int n) {
  std::vector<Sample> v;
  for (int i = 0; i < n; ++i) {
    Sample s = i % 3 == 2 ? testing::unknown_sample(1000.0 + i)
                          : testing::realistic_sample(8, 16, 1000.0 + i);
    if (i % 5 == 4 && s.gpus.size() > 3) {  // lost: nothing but its index
      GpuSample lost;
      lost.index = 3;
      lost.lost = true;
      s.gpus[3] = lost;
    }
    v.push_back(s);
  }
  return v;
}

void write_trace(const std::string& path, const std::vector<Sample>& samples) {
  TraceWriter w(path);
  w.write_header(testing::full_header());
  for (const Sample& s : samples) w.write_sample(s);
  w.close();
}

void expect_trace_reads_back(const std::string& path,
                             const std::vector<Sample>& samples) {
  TraceReader r(path);
  expect_same(testing::full_header(), r.header());
  EXPECT_EQ(r.line(), 1u);
  Sample s;
  for (size_t i = 0; i < samples.size(); ++i) {
    ASSERT_TRUE(r.next(s)) << "sample " << i;
    EXPECT_EQ(r.line(), i + 2);
    expect_same(samples[i], s);
  }
  EXPECT_FALSE(r.next(s));
}

bool is_zstd(const std::string& path) {
  const std::string bytes = TempDir::read(path);
  return bytes.size() >= 4 && bytes.compare(0, 4, "\x28\xB5\x2F\xFD") == 0;
}

TEST(TraceFile, PlainTraceRoundTrips) {
  TempDir dir;
  const auto samples = some_samples(50);
  write_trace(dir.path("t.jsonl"), samples);
  EXPECT_FALSE(is_zstd(dir.path("t.jsonl")));
  expect_trace_reads_back(dir.path("t.jsonl"), samples);
}

TEST(TraceFile, PlainTraceIsOneJsonObjectPerLine) {
  TempDir dir;
  write_trace(dir.path("t.jsonl"), some_samples(5));
  std::istringstream in(TempDir::read(dir.path("t.jsonl")));
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    EXPECT_TRUE(nlohmann::json::parse(line).is_object());
    ++n;
  }
  EXPECT_EQ(n, 6);
}

TEST(TraceFile, ZstdTraceRoundTrips) {
  TempDir dir;
  const auto samples = some_samples(300);  // > 1 MiB of JSON: several drains
  write_trace(dir.path("t.jsonl.zst"), samples);
  EXPECT_TRUE(is_zstd(dir.path("t.jsonl.zst")));
  expect_trace_reads_back(dir.path("t.jsonl.zst"), samples);
}

TEST(TraceFile, ZstdIsRecognisedByContentNotByName) {
  TempDir dir;
  const auto samples = some_samples(4);
  write_trace(dir.path("t.zst"), samples);
  std::filesystem::rename(dir.path("t.zst"), dir.path("renamed.jsonl"));
  expect_trace_reads_back(dir.path("renamed.jsonl"), samples);
  // And a plain file called .zst on the reading side is read as plain.
  write_trace(dir.path("plain.jsonl"), samples);
  std::filesystem::rename(dir.path("plain.jsonl"), dir.path("plain.zst"));
  expect_trace_reads_back(dir.path("plain.zst"), samples);
}

TEST(TraceFile, TruncatedZstdFileIsAnErrorNotACrash) {
  TempDir dir;
  write_trace(dir.path("t.zst"), some_samples(200));
  const std::string bytes = TempDir::read(dir.path("t.zst"));
  const std::string cut =
      dir.write("cut.zst", bytes.substr(0, bytes.size() / 2));
  try {
    TraceReader r(cut);
    Sample s;
    while (r.next(s)) {
    }
    FAIL() << "a truncated zstd stream read without error";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find(cut + ":"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos)
        << e.what();
  }
}

TEST(TraceFile, CorruptZstdDataIsAnError) {
  TempDir dir;
  write_trace(dir.path("t.zst"), some_samples(20));
  std::string bytes = TempDir::read(dir.path("t.zst"));
  for (size_t i = bytes.size() / 3; i < bytes.size() / 3 + 64; ++i)
    bytes[i] ^= 0x5A;
  const std::string bad = dir.write("bad.zst", bytes);
  EXPECT_THROW(
      {
        TraceReader r(bad);
        Sample s;
        while (r.next(s)) {
        }
      },
      TraceError);
}

// Ctrl-C / kill safety: a recorder killed after flush() leaves a trace whose
// flushed samples all read back.
void expect_killed_writer_leaves_readable_trace(const std::string& path,
                                                bool expect_truncation_error) {
  const auto samples = some_samples(7);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    TraceWriter w(path);
    w.write_header(testing::full_header());
    for (const Sample& s : samples) w.write_sample(s);
    w.flush();
    Sample unflushed = testing::full_sample(5000);
    w.write_sample(unflushed);
    ::raise(SIGKILL);  // no close(), no destructors
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));

  TraceReader r(path);
  Sample s;
  size_t n = 0;
  bool truncation_error = false;
  try {
    while (r.next(s)) {
      ASSERT_LT(n, samples.size());
      expect_same(samples[n], s);
      ++n;
    }
  } catch (const TraceError& e) {
    truncation_error = true;
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(n, samples.size());
  EXPECT_EQ(truncation_error, expect_truncation_error);
}

TEST(TraceFile, KilledRecorderLeavesEveryFlushedSamplePlain) {
  TempDir dir;
  expect_killed_writer_leaves_readable_trace(dir.path("k.jsonl"), false);
}

TEST(TraceFile, KilledRecorderLeavesEveryFlushedSampleZstd) {
  TempDir dir;
  // The zstd frame was never ended: the reader delivers every flushed sample,
  // then reports the truncation.
  expect_killed_writer_leaves_readable_trace(dir.path("k.jsonl.zst"), true);
}

TEST(TraceFile, MissingFileSaysWhichAndWhy) {
  try {
    TraceReader r("/nonexistent/dir/trace.jsonl");
    FAIL();
  } catch (const TraceError& e) {
    EXPECT_STREQ(e.what(),
                 "/nonexistent/dir/trace.jsonl: cannot open: No such file or "
                 "directory");
  }
  EXPECT_THROW(TraceWriter("/nonexistent/dir/out.jsonl"), TraceError);
}

TEST(TraceFile, EmptyFileHasNoHeader) {
  TempDir dir;
  const std::string path = dir.write("empty.jsonl", "");
  try {
    TraceReader r(path);
    FAIL();
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ": "), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("header"), std::string::npos);
  }
}

TEST(TraceFile, HeaderOnlyTraceHasNoSamples) {
  TempDir dir;
  {
    TraceWriter w(dir.path("h.jsonl"));
    w.write_header(testing::full_header());
  }  // destructor closes
  TraceReader r(dir.path("h.jsonl"));
  Sample s;
  EXPECT_FALSE(r.next(s));
}

TEST(TraceFile, LastLineWithoutNewlineIsRead) {
  TempDir dir;
  const std::string path =
      dir.write("t.jsonl", header_to_json(testing::full_header()) + "\n" +
                               sample_to_json(testing::full_sample()));
  TraceReader r(path);
  Sample s;
  ASSERT_TRUE(r.next(s));
  expect_same(testing::full_sample(), s);
  EXPECT_FALSE(r.next(s));
}

TEST(TraceFile, CrlfLineEndingsAreRead) {
  TempDir dir;
  const std::string path =
      dir.write("t.jsonl", header_to_json(testing::full_header()) + "\r\n" +
                               sample_to_json(testing::full_sample()) + "\r\n");
  TraceReader r(path);
  Sample s;
  ASSERT_TRUE(r.next(s));
  EXPECT_FALSE(r.next(s));
}

TEST(TraceFile, VeryLongLineIsRead) {
  // Lines longer than the reader's read chunk (1 MiB) must still work.
  Sample big = testing::unknown_sample();
  big.processes[0].cmdline = std::string(3 << 20, 'x');
  TempDir dir;
  write_trace(dir.path("big.jsonl"), {big, testing::full_sample(2e9)});
  expect_trace_reads_back(dir.path("big.jsonl"),
                          {big, testing::full_sample(2e9)});
}

TEST(TraceFile, WriterRefusesSamplesOutOfOrderOrBeforeTheHeader) {
  TempDir dir;
  TraceWriter w(dir.path("t.jsonl"));
  EXPECT_THROW(w.write_sample(testing::full_sample(10)), TraceError);
  w.write_header(testing::full_header());
  EXPECT_THROW(w.write_header(testing::full_header()), TraceError);
  w.write_sample(testing::full_sample(10));
  w.write_sample(testing::full_sample(10));  // equal t is allowed
  EXPECT_THROW(w.write_sample(testing::full_sample(9)), TraceError);
  w.close();
  EXPECT_THROW(w.write_sample(testing::full_sample(11)), TraceError);
  // The refused sample left nothing behind.
  TraceReader r(dir.path("t.jsonl"));
  Sample s;
  int n = 0;
  while (r.next(s)) ++n;
  EXPECT_EQ(n, 2);
}

// Runs `body` with file descriptor `fd` temporarily redirected to `path`.
template <typename F>
void with_fd_redirected(int fd, const std::string& path, int flags, F body) {
  const int saved = ::dup(fd);
  const int file = ::open(path.c_str(), flags, 0644);
  ASSERT_GE(file, 0);
  ::dup2(file, fd);
  ::close(file);
  body();
  ::dup2(saved, fd);
  ::close(saved);
}

TEST(TraceFile, DashMeansStdoutAndStdin) {
  TempDir dir;
  const auto samples = some_samples(3);
  std::fflush(stdout);
  with_fd_redirected(1, dir.path("out.jsonl"), O_WRONLY | O_CREAT | O_TRUNC,
                     [&] { write_trace("-", samples); });
  with_fd_redirected(0, dir.path("out.jsonl"), O_RDONLY, [&] {
    TraceReader r("-");
    Sample s;
    size_t n = 0;
    while (r.next(s)) expect_same(samples[n++], s);
    EXPECT_EQ(n, samples.size());
  });
  expect_trace_reads_back(dir.path("out.jsonl"), samples);
}

}  // namespace
}  // namespace gd
