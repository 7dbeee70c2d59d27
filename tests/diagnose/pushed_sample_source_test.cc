// The history scan's hand-over to the diagnosis: every sample arrives, in
// order and whole, while the samples the reader is done with go back to the
// producer (a scan decodes into their storage instead of allocating anew).
#include "diagnose/pushed_sample_source.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace gd {
namespace {

Sample numbered(int i) {
  Sample s;
  s.t = i;
  ProcessSample p;
  p.pid = static_cast<uint32_t>(i);
  p.cmdline =
      "python train.py --a-command-line-longer-than-sso " + std::to_string(i);
  s.processes.push_back(p);
  return s;
}

TEST(PushedSampleSource, EverySampleArrivesWholeAndInOrder) {
  constexpr int kSamples = 1000;
  int handed_back = 0;
  std::vector<double> added;
  PushedSampleSource source(
      [&](const std::function<bool(Sample&)>& push) {
        Sample slot;  // one slot, reused like a scan's block
        for (int i = 0; i < kSamples; ++i) {
          // What the reader handed back is overwritten, as a scan does.
          if (!slot.processes.empty()) ++handed_back;
          slot = numbered(i);
          if (!push(slot)) return;
        }
      },
      [&](const Sample& s) { added.push_back(s.t); });
  Sample s;
  int n = 0;
  while (source.next(s)) {
    ASSERT_EQ(s.t, n);
    ASSERT_EQ(s.processes.size(), 1u);
    EXPECT_EQ(s.processes[0].cmdline, numbered(n).processes[0].cmdline);
    ++n;
  }
  EXPECT_EQ(n, kSamples);
  EXPECT_EQ(added.size(), static_cast<size_t>(kSamples));
  EXPECT_GT(handed_back, 0) << "read samples come back to the producer";
}

TEST(PushedSampleSource, AReaderStoppingEarlyStopsTheProducer) {
  int pushed = 0;
  {
    PushedSampleSource source(
        [&](const std::function<bool(Sample&)>& push) {
          for (int i = 0;; ++i) {
            Sample s = numbered(i);
            ++pushed;
            if (!push(s)) return;
          }
        },
        nullptr);
    Sample s;
    for (int i = 0; i < 10; ++i) ASSERT_TRUE(source.next(s));
    EXPECT_EQ(s.t, 9);
  }
  EXPECT_LT(pushed, 1000) << "bounded by the queue, not the producer";
}

TEST(PushedSampleSource, TheProducersErrorReachesTheReader) {
  PushedSampleSource source(
      [](const std::function<bool(Sample&)>& push) {
        Sample s = numbered(0);
        push(s);
        throw std::runtime_error("corrupt history");
      },
      nullptr);
  Sample s;
  EXPECT_THROW(
      {
        while (source.next(s)) {
        }
      },
      std::runtime_error);
}

}  // namespace
}  // namespace gd
