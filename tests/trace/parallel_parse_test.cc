// TraceReader with parse threads (what `diagnose --from` uses): the samples,
// their line numbers and the errors are exactly those of the sequential
// reader, whatever the number of threads, and a reader dropped half-way does
// not hang.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model_compare.h"
#include "temp_dir.h"
#include "trace/trace_io.h"
#include "trace_fixtures.h"

namespace gd {
namespace {

using testing::expect_same;
using testing::TempDir;

// More samples than several batches hold, with blank lines between some,
// so that line numbers and sample positions differ.
std::string trace_text(int n, std::vector<Sample>& samples) {
  std::string text = header_to_json(testing::full_header()) + "\n";
  for (int i = 0; i < n; ++i) {
    Sample s = i % 4 == 3 ? testing::unknown_sample(1000.0 + i)
                          : testing::realistic_sample(8, 16, 1000.0 + i);
    text += sample_to_json(s) + "\n";
    if (i % 7 == 0) text += "\n   \n";
    samples.push_back(std::move(s));
  }
  return text;
}

struct Read {
  std::vector<Sample> samples;
  std::vector<size_t> lines;
  std::string error;  // "" = read to the end
};

Read read_all(const std::string& path, int threads) {
  Read out;
  TraceReader r(path,
                {.parse_threads = threads, .process_budget = {}, .fields = {}});
  Sample s;
  try {
    while (r.next(s)) {
      out.samples.push_back(s);
      out.lines.push_back(r.line());
    }
  } catch (const TraceError& e) {
    out.error = e.what();
  }
  return out;
}

void expect_same_read(const Read& want, const Read& got, int threads) {
  ASSERT_EQ(want.samples.size(), got.samples.size()) << threads << " threads";
  for (size_t i = 0; i < want.samples.size(); ++i) {
    expect_same(want.samples[i], got.samples[i]);
    EXPECT_EQ(want.lines[i], got.lines[i]) << "sample " << i;
  }
  EXPECT_EQ(want.error, got.error) << threads << " threads";
}

TEST(ParallelParse, SamplesAndLineNumbersAreThoseOfTheSequentialReader) {
  TempDir dir;
  std::vector<Sample> samples;
  const std::string path = dir.write("t.jsonl", trace_text(200, samples));
  const Read sequential = read_all(path, 0);
  ASSERT_EQ(sequential.samples.size(), samples.size());
  ASSERT_EQ(sequential.error, "");
  for (size_t i = 0; i < samples.size(); ++i)
    expect_same(samples[i], sequential.samples[i]);
  for (int threads : {1, 2, 3, 8}) {
    expect_same_read(sequential, read_all(path, threads), threads);
  }
}

TEST(ParallelParse, AMalformedLineIsReportedAfterEverySampleBeforeIt) {
  TempDir dir;
  std::vector<Sample> samples;
  std::string text = trace_text(100, samples);
  // Break sample 61 (a later batch than the first): a wrong type.
  const std::string good = sample_to_json(samples[61]);
  std::string bad = good;
  bad.replace(bad.find("\"t\":"), 4, "\"t\":\"x\",\"u\":");
  text.replace(text.find(good), good.size(), bad);
  // A second error later must not be the one reported.
  text += "{not json\n";
  const std::string path = dir.write("t.jsonl", text);
  const Read sequential = read_all(path, 0);
  ASSERT_EQ(sequential.samples.size(), 61u);
  ASSERT_NE(sequential.error.find("t.jsonl:"), std::string::npos);
  ASSERT_NE(sequential.error.find(": t: expected a number"), std::string::npos)
      << sequential.error;
  for (int threads : {1, 2, 4}) {
    expect_same_read(sequential, read_all(path, threads), threads);
  }
}

TEST(ParallelParse, SamplesOutOfTimeOrderNameTheirLine) {
  TempDir dir;
  std::vector<Sample> samples;
  std::string text = trace_text(40, samples);
  text += sample_to_json(testing::realistic_sample(8, 16, 10.0)) + "\n";
  const std::string path = dir.write("t.jsonl", text);
  const Read sequential = read_all(path, 0);
  ASSERT_EQ(sequential.samples.size(), 40u);  // the 41st is refused
  ASSERT_NE(sequential.error.find("samples must be in time order"),
            std::string::npos)
      << sequential.error;
  expect_same_read(sequential, read_all(path, 3), 3);
}

TEST(ParallelParse, ATruncatedZstdTraceEndsWithTheTruncationAfterItsSamples) {
  TempDir dir;
  const std::string path = dir.path("t.jsonl.zst");
  {
    TraceWriter w(path);
    w.write_header(testing::full_header());
    for (int i = 0; i < 300; ++i)
      w.write_sample(testing::realistic_sample(8, 16, 1000.0 + i));
    w.close();
  }
  std::string bytes = TempDir::read(path);
  dir.write("cut.jsonl.zst", bytes.substr(0, bytes.size() * 2 / 3));
  const Read sequential = read_all(dir.path("cut.jsonl.zst"), 0);
  ASSERT_GT(sequential.samples.size(), 0u);
  ASSERT_NE(sequential.error.find("truncated"), std::string::npos)
      << sequential.error;
  for (int threads : {1, 2, 4}) {
    expect_same_read(sequential, read_all(dir.path("cut.jsonl.zst"), threads),
                     threads);
  }
}

TEST(ParallelParse, AReaderDroppedHalfWayReturnsAtOnce) {
  TempDir dir;
  std::vector<Sample> samples;
  const std::string path = dir.write("t.jsonl", trace_text(500, samples));
  for (int threads : {1, 2, 4}) {
    TraceReader r(
        path, {.parse_threads = threads, .process_budget = {}, .fields = {}});
    Sample s;
    ASSERT_TRUE(r.next(s));
    ASSERT_TRUE(r.next(s));
    // The destructor stops the workers, which wait for room to parse into;
    // a hang here fails the test by its timeout.
  }
}

TEST(ParallelParse, AnEmptyTraceBodyEndsAtOnce) {
  TempDir dir;
  const std::string path =
      dir.write("t.jsonl", header_to_json(testing::full_header()) + "\n\n");
  for (int threads : {0, 1, 4}) {
    const Read r = read_all(path, threads);
    EXPECT_TRUE(r.samples.empty());
    EXPECT_EQ(r.error, "");
  }
}

}  // namespace
}  // namespace gd
