// LineSource: lines of every length, across chunk boundaries, plain and zstd,
// from files and pipes; the reading thread never outlives it.
#include "trace/line_source.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <zstd.h>

#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "temp_dir.h"
#include "trace/trace_io.h"

namespace gd {
namespace {

using testing::TempDir;

// With a content checksum, so damage is found even inside literals.
std::string zstd_of(const std::string& text) {
  std::string out(ZSTD_compressBound(text.size()), '\0');
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
  const size_t n =
      ZSTD_compress2(cctx, out.data(), out.size(), text.data(), text.size());
  ZSTD_freeCCtx(cctx);
  EXPECT_FALSE(ZSTD_isError(n));
  out.resize(n);
  return out;
}

// Lines whose lengths straddle the chunk size and the headroom the reader
// keeps for an unfinished line, so every way a line can cross a chunk
// boundary occurs.
std::vector<std::string> awkward_lines() {
  std::mt19937 rng(42);
  const size_t sizes[] = {0,
                          1,
                          ChunkReader::kHeadroom - 1,
                          ChunkReader::kHeadroom,
                          ChunkReader::kHeadroom + 1,
                          ChunkReader::kPayload - 1,
                          ChunkReader::kPayload + 7,
                          3 * ChunkReader::kPayload};
  std::vector<std::string> lines;
  for (int round = 0; round < 3; ++round) {
    for (size_t size : sizes) {
      std::string line(size, 'a');
      for (auto& c : line) c = static_cast<char>('a' + rng() % 26);
      lines.push_back(line);
      // Many short lines between the long ones move the boundaries about.
      for (int i = 0; i < 1000; ++i)
        lines.push_back(std::string(1 + rng() % 300, 'x'));
    }
  }
  return lines;
}

void expect_lines(LineSource& src, const std::vector<std::string>& want) {
  std::string_view line;
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_TRUE(src.next(line)) << "line " << i + 1;
    ASSERT_EQ(line.size(), want[i].size()) << "line " << i + 1;
    ASSERT_EQ(line, want[i]) << "line " << i + 1;
    // simdjson reads up to kPadding bytes past the line: they must exist
    // (ASan would report a read past the buffer).
    volatile char past = line.data()[line.size() + LineSource::kPadding - 1];
    (void)past;
  }
  EXPECT_FALSE(src.next(line));
  EXPECT_EQ(src.line_number(), want.size());
}

std::string joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& l : lines) text += l + '\n';
  return text;
}

TEST(LineSource, LinesAcrossChunkBoundariesPlainAndZstd) {
  TempDir dir;
  const auto lines = awkward_lines();
  const std::string text = joined(lines);
  {
    LineSource plain(dir.write("t.jsonl", text));
    EXPECT_FALSE(plain.compressed());
    expect_lines(plain, lines);
  }
  {
    LineSource packed(dir.write("t.jsonl.zst", zstd_of(text)));
    EXPECT_TRUE(packed.compressed());
    expect_lines(packed, lines);
  }
}

TEST(LineSource, LastLineWithoutNewlineAndTinyFiles) {
  TempDir dir;
  for (const std::string text : {"", "a", "ab\ncd", "\n\n", "abc"}) {
    LineSource src(dir.write("t", text));
    std::vector<std::string> want;
    size_t begin = 0;
    while (begin < text.size()) {
      size_t nl = text.find('\n', begin);
      if (nl == std::string::npos) nl = text.size();
      want.push_back(text.substr(begin, nl - begin));
      begin = nl + 1;
    }
    expect_lines(src, want);
  }
}

TEST(LineSource, CorruptZstdNamesTheLineAfterTheIntactOnes) {
  TempDir dir;
  std::string packed = zstd_of(joined(awkward_lines()));
  packed[packed.size() / 2] ^= 0x55;
  packed[packed.size() / 2 + 1] ^= 0x55;
  LineSource src(dir.write("bad.zst", packed));
  std::string_view line;
  try {
    while (src.next(line)) {
    }
    FAIL() << "corrupt zstd read without error";
  } catch (const TraceError& e) {
    const std::string what = e.what();
    EXPECT_NE(
        what.find("bad.zst:" + std::to_string(src.line_number() + 1) + ": "),
        std::string::npos)
        << what;
  }
}

// A pipe whose writer never closes it: the reader is destroyed while its
// thread waits for input, and that must not wait for the writer.
TEST(LineSource, DestroyedWhileAPipeStaysOpen) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const int saved = ::dup(0);
  ::dup2(fds[0], 0);
  ::close(fds[0]);
  ASSERT_EQ(::write(fds[1], "one\ntwo\n", 8), 8);
  const auto start = std::chrono::steady_clock::now();
  {
    LineSource src("-");
    std::string_view line;
    ASSERT_TRUE(src.next(line));
    EXPECT_EQ(line, "one");
    ASSERT_TRUE(src.next(line));
    EXPECT_EQ(line, "two");
  }
  const double s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  ::dup2(saved, 0);
  ::close(saved);
  ::close(fds[1]);
  // The reading thread looks for a stop every 50 ms; 10 s means it hung.
  EXPECT_LT(s, 10.0);
}

}  // namespace
}  // namespace gd
