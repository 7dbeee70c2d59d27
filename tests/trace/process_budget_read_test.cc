// A trace reader keeps each sample's processes within the per-sample budget
// (model/process_budget.h) and counts the rest, however many a line lists;
// lines longer than a parse batch are read in order by any number of
// threads.
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

// A GPU process (pid 9000, listed on GPU 0) whose launcher (8999) and own
// entry come after `workers` unrelated processes.
Sample crowded_sample(double t, int workers) {
  Sample s = testing::realistic_sample(1, 0, t);
  s.gpus[0].processes = std::vector<GpuProcess>{};
  GpuProcess gp;
  gp.pid = 9000;
  gp.used_bytes = 1 << 30;
  s.gpus[0].processes->push_back(gp);
  for (int i = 0; i < workers; ++i)
    s.processes.push_back(
        testing::full_process(20000 + static_cast<uint32_t>(i), 1));
  s.processes.push_back(testing::full_process(8999, 1));
  s.processes.push_back(testing::full_process(9000, 8999));
  return s;
}

std::vector<Sample> read_all(const std::string& path, int threads,
                             ProcessBudget budget) {
  TraceReader r(
      path, {.parse_threads = threads, .process_budget = budget, .fields = {}});
  std::vector<Sample> out;
  Sample s;
  while (r.next(s)) out.push_back(s);
  return out;
}

std::string trace_of(const std::vector<Sample>& samples) {
  std::string text = header_to_json(testing::full_header()) + "\n";
  for (const Sample& s : samples) text += sample_to_json(s) + "\n";
  return text;
}

TEST(ProcessBudgetRead, TheGpuProcessAndItsLauncherAreKeptAndTheRestCounted) {
  TempDir dir;
  Sample s = crowded_sample(1000, 2000);
  s.processes_left_out = 7;  // already left out by whoever wrote it
  const std::string path = dir.write("t.jsonl", trace_of({s}));
  const ProcessBudget budget{.max_processes = 10};
  for (int threads : {0, 2}) {
    const auto got = read_all(path, threads, budget);
    ASSERT_EQ(got.size(), 1u);
    const auto& kept = got[0].processes;
    ASSERT_EQ(kept.size(), 10u) << threads << " threads";
    EXPECT_EQ(kept[0].pid, 9000u);
    EXPECT_EQ(kept[1].pid, 8999u);
    EXPECT_EQ(kept[2].pid, 20000u);  // then the others, in the line's order
    EXPECT_EQ(got[0].processes_left_out, 7u + 2002u - 10u);
  }
}

TEST(ProcessBudgetRead, ASampleWithinTheBudgetIsReadWhole) {
  TempDir dir;
  const Sample s = crowded_sample(1000, 20);
  const std::string path = dir.write("t.jsonl", trace_of({s}));
  const auto got = read_all(path, 0, ProcessBudget{});
  ASSERT_EQ(got.size(), 1u);
  expect_same(s, got[0]);
}

TEST(ProcessBudgetRead, AProcessPastTheBudgetStillNeedsAValidPid) {
  TempDir dir;
  std::string line = sample_to_json(crowded_sample(1000, 30));
  const std::string good = "{\"pid\":20005,";
  const auto at = line.find(good);
  ASSERT_NE(at, std::string::npos);
  line.replace(at, good.size(), "{\"pid\":\"x\",");
  const std::string path = dir.write(
      "t.jsonl", header_to_json(testing::full_header()) + "\n" + line + "\n");
  try {
    read_all(path, 0, ProcessBudget{.max_processes = 4});
    FAIL() << "a string pid was accepted";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("t.jsonl:2: processes[5].pid"),
              std::string::npos)
        << e.what();
  }
}

// Lines longer than a parse batch (one at a time in flight) between short
// ones: every thread count reads what the sequential reader reads.
TEST(ProcessBudgetRead, LongLinesAmongShortOnesAreReadInOrder) {
  TempDir dir;
  std::vector<Sample> samples;
  for (int i = 0; i < 24; ++i) {
    Sample s = i % 3 == 1 ? crowded_sample(1000 + i, 6000)
                          : testing::realistic_sample(2, 4, 1000 + i);
    samples.push_back(std::move(s));
  }
  const std::string text = trace_of(samples);
  ASSERT_GT(sample_to_json(samples[1]).size(), size_t{1} << 21);
  const std::string path = dir.write("t.jsonl", text);
  const ProcessBudget all{.max_processes = 1 << 20,
                          .max_cmdline_bytes = size_t{1} << 30};
  const auto sequential = read_all(path, 0, all);
  ASSERT_EQ(sequential.size(), samples.size());
  for (size_t i = 0; i < samples.size(); ++i)
    expect_same(samples[i], sequential[i]);
  for (int threads : {1, 2, 3, 8}) {
    const auto got = read_all(path, threads, all);
    ASSERT_EQ(got.size(), samples.size()) << threads << " threads";
    for (size_t i = 0; i < got.size(); ++i) expect_same(sequential[i], got[i]);
  }
}

TEST(ProcessBudgetRead, TheCountLeftOutSurvivesARoundTrip) {
  Sample s = testing::realistic_sample(1, 3, 1000);
  s.processes_left_out = 123456789012ULL;
  const std::string line = sample_to_json(s);
  EXPECT_NE(line.find("\"processes_left_out\":123456789012"),
            std::string::npos);
  expect_same(s, sample_from_json(line, "x"));
  s.processes_left_out = 0;
  EXPECT_EQ(sample_to_json(s).find("processes_left_out"), std::string::npos);
}

}  // namespace
}  // namespace gd
