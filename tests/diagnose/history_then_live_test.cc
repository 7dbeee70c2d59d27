// A live window that starts from serve's history: history samples first,
// then live ones, each part counted for the report.
#include "diagnose/history_then_live.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "scenario_builder.h"
#include "trace/trace_io.h"

namespace gd::test {
namespace {

std::string trace_text(size_t n, double t0) {
  std::string text = header_to_json(make_header(1)) + "\n";
  Jitter j;
  for (size_t i = 0; i < n; ++i) {
    Sample s;
    s.t = t0 + static_cast<double>(i);
    s.gpus.push_back(busy_gpu(0, j));
    text += sample_to_json(s) + "\n";
  }
  return text;
}

std::vector<Sample> live_samples(size_t n, double t0) {
  return make_samples(
      n, 1.0, [&](size_t i, Sample& s) { s.t = t0 + static_cast<double>(i); });
}

TEST(HistoryThenLive, HistoryComesFirstThenLiveAndEachPartIsCounted) {
  VectorSampleSource live(live_samples(3, kT0 + 600));
  HistoryThenLiveSource source(trace_text(600, kT0), live);
  std::vector<double> ts;
  Sample s;
  while (source.next(s)) ts.push_back(s.t);
  ASSERT_EQ(ts.size(), 603u);
  EXPECT_EQ(ts.front(), kT0);
  EXPECT_EQ(ts[599], kT0 + 599);
  EXPECT_EQ(ts[600], kT0 + 600);
  auto parts = source.parts("http://127.0.0.1:9856");
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].source, "serve");
  EXPECT_EQ(parts[0].url, "http://127.0.0.1:9856");
  EXPECT_EQ(parts[0].samples, 600u);
  EXPECT_EQ(parts[0].end, kT0 + 599);
  EXPECT_EQ(parts[1].source, "live");
  EXPECT_EQ(parts[1].samples, 3u);
  EXPECT_EQ(parts[1].start, kT0 + 600);
}

TEST(HistoryThenLive, LiveSamplesNotAfterTheHistoryAreLeftOut) {
  VectorSampleSource live(live_samples(3, kT0 + 8));        // 8, 9, 10
  HistoryThenLiveSource source(trace_text(10, kT0), live);  // 0..9
  Sample s;
  size_t n = 0;
  while (source.next(s)) ++n;
  EXPECT_EQ(n, 11u);
  EXPECT_EQ(source.parts("u")[1].samples, 1u);
}

TEST(HistoryThenLive, HistoryWithoutSamplesIsAnEmptyPart) {
  VectorSampleSource live(live_samples(2, kT0));
  HistoryThenLiveSource source(trace_text(0, kT0), live);
  Sample s;
  while (source.next(s)) {
  }
  auto parts = source.parts("u");
  EXPECT_EQ(parts[0].samples, 0u);
  EXPECT_EQ(parts[1].samples, 2u);
}

TEST(HistoryThenLive, ACutOffHistoryEndsWhereItBreaksAndLiveGoesOn) {
  std::string text = trace_text(5, kT0);
  text += "{\"t\": " + std::to_string(kT0 + 5) + ", \"gpus\": [";  // cut off
  VectorSampleSource live(live_samples(2, kT0 + 10));
  HistoryThenLiveSource source(text, live);
  Sample s;
  size_t n = 0;
  while (source.next(s)) ++n;
  EXPECT_EQ(n, 7u);
  EXPECT_EQ(source.parts("u")[0].samples, 5u);
  EXPECT_EQ(source.parts("u")[1].samples, 2u);
  EXPECT_FALSE(source.history_error().empty());
}

TEST(HistoryThenLive, SomethingThatIsNotATraceThrows) {
  VectorSampleSource live({});
  EXPECT_THROW(HistoryThenLiveSource("<html>busy</html>\n", live), TraceError);
  EXPECT_THROW(HistoryThenLiveSource("", live), TraceError);
}

}  // namespace
}  // namespace gd::test
