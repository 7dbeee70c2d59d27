// The live window of `diagnose`: how many samples it takes, the progress it
// reports, and that a stop request (Ctrl-C) ends it early.
#include "diagnose/live_sample_source.h"

#include <gtest/gtest.h>

#include <vector>

namespace gd {
namespace {

TEST(LiveSampleSource, TakesOneSamplePerIntervalOverTheWindow) {
  std::atomic<bool> stop{false};
  long taken = 0;
  std::vector<long> progress;
  long ended_at = -1;
  LiveSampleSource::Progress p;
  p.on_sample = [&](long n, long total) {
    progress.push_back(n);
    EXPECT_EQ(total, 4);
  };
  p.on_end = [&](long n) { ended_at = n; };
  LiveSampleSource source(
      [&] {
        Sample s;
        s.t = static_cast<double>(++taken);
        return s;
      },
      0.01, 0.04, stop, p);
  Sample s;
  std::vector<double> ts;
  while (source.next(s)) ts.push_back(s.t);
  EXPECT_EQ(ts, (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(progress, (std::vector<long>{1, 2, 3, 4}));
  EXPECT_EQ(ended_at, 4);
  EXPECT_FALSE(source.next(s)) << "the window stays over";
}

TEST(LiveSampleSource, AWindowShorterThanTwoIntervalsStillComparesTwo) {
  std::atomic<bool> stop{false};
  LiveSampleSource source([] { return Sample{}; }, 1.0, 0.1, stop);
  EXPECT_EQ(source.total(), 2);
}

TEST(LiveSampleSource, StopEndsTheWindowWithWhatWasTaken) {
  std::atomic<bool> stop{false};
  long taken = 0;
  LiveSampleSource source(
      [&] {
        ++taken;
        return Sample{};
      },
      0.01, 3600, stop);
  Sample s;
  ASSERT_TRUE(source.next(s));
  ASSERT_TRUE(source.next(s));
  stop = true;
  EXPECT_FALSE(source.next(s));
  EXPECT_EQ(taken, 2);
}

}  // namespace
}  // namespace gd
