// Reading a few fields of each sample (TraceReader::Options::fields, what
// `report --from` asks for): the fields asked for are exactly what the full
// parser reads, the others are unknown, a field asked for is held to the
// full parser's rules and one not asked for is not read at all.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "model_compare.h"
#include "sample_projection.h"
#include "temp_dir.h"
#include "trace/trace_io.h"
#include "trace_fixtures.h"

namespace gd {
namespace {

using testing::expect_same;
using testing::projected;

// What `report` asks for.
SampleFields accounted() {
  return {.gpu = {"util_pct", "power_w", "energy_mj_total", "sm_active_pct"},
          .gpu_processes = true,
          .process_tree = true};
}

Sample read_fields(const std::string& line, const SampleFields& f) {
  Sample s;
  sample_fields_from_json(line, "t.jsonl:2", f, s);
  return s;
}

std::string error_of(const std::string& line, const SampleFields& f) {
  try {
    read_fields(line, f);
  } catch (const TraceError& e) {
    return e.what();
  }
  return "";
}

TEST(SampleFields, WhatIsAskedForIsWhatTheFullParserReads) {
  std::vector<Sample> samples = {testing::full_sample(),
                                 testing::realistic_sample(8, 24, 1000),
                                 testing::unknown_sample()};
  samples[0].gpus[1].lost = true;
  for (const SampleFields& f :
       {accounted(),
        SampleFields{
            .gpu = {"temp_c"}, .gpu_processes = false, .process_tree = false},
        SampleFields{.gpu = {}, .gpu_processes = true, .process_tree = false},
        SampleFields{}}) {
    for (const Sample& s : samples) {
      const std::string line = sample_to_json(s);
      const Sample full = sample_from_json(line, "t.jsonl:2");
      expect_same(projected(full, f), read_fields(line, f));
    }
  }
}

TEST(SampleFields, StorageReusedFromAWholeSampleKeepsNothingOfIt) {
  Sample reused = testing::full_sample();
  const std::string line = sample_to_json(testing::realistic_sample(2, 3, 5));
  sample_fields_from_json(line, "t.jsonl:2", accounted(), reused);
  expect_same(projected(sample_from_json(line, "t.jsonl:2"), accounted()),
              reused);
}

TEST(SampleFields, AFieldAskedForKeepsTheFullParsersRules) {
  const std::string bad =
      R"({"t": 5, "gpus": [{"index": 0, "power_w": "hot"}]})";
  EXPECT_EQ(error_of(bad, accounted()),
            "t.jsonl:2: gpus[0].power_w: expected a number, got a string");
  EXPECT_EQ(error_of(bad, SampleFields{.gpu = {"temp_c"},
                                       .gpu_processes = false,
                                       .process_tree = false}),
            "");
  EXPECT_EQ(error_of(R"({"t": 5, "processes": [{"pid": 1.5}]})", accounted()),
            "t.jsonl:2: processes[0].pid: expected an integer, got 1.500000");
  EXPECT_EQ(error_of(R"({"t": 5, "processes": [{"ppid": 1}]})", accounted()),
            "t.jsonl:2: processes[0]: missing required field \"pid\"");
  EXPECT_EQ(error_of(R"({"gpus": []})", accounted()),
            "t.jsonl:2: missing required field \"t\"");
  EXPECT_EQ(error_of(R"({"t": 5, "gpus": [{"index": 0}, {"index": 0}]})",
                     accounted()),
            error_of(R"({"t": 5, "gpus": [{"index": 0}, {"index": 0}]})",
                     SampleFields{}));
  EXPECT_NE(error_of(R"({"t": 5, "gpus": [{"index": 0}, {"index": 0}]})",
                     accounted()),
            "");
  EXPECT_NE(error_of(R"({"t": 5, "gpus": [)", accounted()), "");
  EXPECT_NE(error_of("[1, 2]", accounted()), "");
}

TEST(SampleFields, KeysAreMatchedAfterTheirEscapes) {
  const Sample s = read_fields(
      R"({"t": 5, "gpus": [{"index": 0, "util\u005fpct": 42, "power_w": 7}]})",
      accounted());
  ASSERT_EQ(s.gpus.size(), 1u);
  EXPECT_EQ(s.gpus[0].util_pct, 42.0);
  EXPECT_EQ(s.gpus[0].power_w, 7.0);
  // A long unknown key and one as long as the padding are stepped over.
  const std::string long_key(200, 'k');
  const Sample t = read_fields(
      R"({"t": 5, ")" + long_key + R"(": 1, "gpus": [{"index": 3}]})",
      accounted());
  ASSERT_EQ(t.gpus.size(), 1u);
  EXPECT_EQ(t.gpus[0].index, 3);
}

TEST(SampleFields, AnUnknownGpuFieldIsRefusedByName) {
  testing::TempDir dir;
  const std::string path =
      dir.write("t.jsonl", header_to_json(testing::full_header()) + "\n");
  try {
    TraceReader r(path, {.parse_threads = 0,
                         .process_budget = {},
                         .fields = SampleFields{.gpu = {"hostname"},
                                                .gpu_processes = false,
                                                .process_tree = false}});
    FAIL() << "accepted";
  } catch (const TraceError& e) {
    EXPECT_STREQ(e.what(),
                 "no numeric GPU field \"hostname\" can be read from a trace");
  }
}

// A line with more processes than the budget keeps those the full parser
// keeps: the GPUs' own first.
TEST(SampleFields, ProcessesPastTheBudgetAreChosenAsTheFullReaderChooses) {
  Sample s = testing::realistic_sample(2, 700, 9);
  std::swap(s.processes[0], s.processes[650]);  // a GPU process late
  testing::TempDir dir;
  const std::string path =
      dir.write("t.jsonl", header_to_json(testing::full_header()) + "\n" +
                               sample_to_json(s) + "\n");
  for (int threads : {0, 2}) {
    Sample full, part;
    TraceReader whole(path, {.parse_threads = threads,
                             .process_budget = {},
                             .fields = std::nullopt});
    ASSERT_TRUE(whole.next(full));
    TraceReader some(path, {.parse_threads = threads,
                            .process_budget = {},
                            .fields = accounted()});
    ASSERT_TRUE(some.next(part));
    EXPECT_EQ(part.processes.size(), 512u);
    EXPECT_EQ(part.processes_left_out, 188u);
    ASSERT_EQ(full.processes.size(), part.processes.size());
    for (size_t i = 0; i < full.processes.size(); ++i)
      EXPECT_EQ(full.processes[i].pid, part.processes[i].pid) << i;
  }
}

// Through the reader, sequential and with parse threads: the samples of a
// trace read for a few fields are those of the whole read, projected.
TEST(SampleFields, TheReaderHandsOutEachSampleProjected) {
  testing::TempDir dir;
  const std::string path = dir.path("t.jsonl");
  {
    std::ofstream out(path);
    out << header_to_json(testing::full_header()) << "\n";
    for (int i = 0; i < 100; ++i)
      out << sample_to_json(testing::realistic_sample(4, 12, 100 + i)) << "\n";
  }
  for (int threads : {0, 1, 3}) {
    TraceReader whole(path);
    TraceReader some(path, {.parse_threads = threads,
                            .process_budget = {},
                            .fields = accounted()});
    Sample a, b;
    size_t n = 0;
    while (whole.next(a)) {
      ASSERT_TRUE(some.next(b));
      EXPECT_EQ(whole.line(), some.line());
      expect_same(projected(a, accounted()), b);
      ++n;
    }
    EXPECT_FALSE(some.next(b));
    EXPECT_EQ(n, 100u);
  }
}

}  // namespace
}  // namespace gd
