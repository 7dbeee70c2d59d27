// The reading thread of `diagnose --from`: samples come out complete and in
// order, a malformed line's error arrives after the samples before it, and
// a consumer that stops early does not hang on the reader.
#include "diagnose/read_ahead_sample_source.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace gd {
namespace {

// Counts up; throws at `throw_at` if set; ends after `count`.
class CountingSource : public SampleSource {
 public:
  CountingSource(int count, int throw_at = -1)
      : count_(count), throw_at_(throw_at) {}
  bool next(Sample& out) override {
    if (n_ == throw_at_)
      throw std::runtime_error("bad line " + std::to_string(n_));
    if (n_ >= count_) return false;
    out.t = n_;
    // Storage is reused: a recycled sample must not keep old processes.
    out.processes.assign(static_cast<size_t>(n_ % 3), ProcessSample{});
    for (size_t i = 0; i < out.processes.size(); ++i)
      out.processes[i].pid = static_cast<uint32_t>(n_ * 10 + i);
    ++n_;
    return true;
  }

 private:
  int n_ = 0, count_, throw_at_;
};

TEST(ReadAheadSampleSource, EverySampleArrivesInOrderAndWhole) {
  for (size_t depth : {1u, 2u, 7u, 64u}) {
    CountingSource inner(1000);
    ReadAheadSampleSource source(inner, depth);
    Sample s;
    int expect = 0;
    while (source.next(s)) {
      ASSERT_EQ(s.t, expect) << "depth " << depth;
      ASSERT_EQ(s.processes.size(), static_cast<size_t>(expect % 3));
      for (size_t i = 0; i < s.processes.size(); ++i)
        ASSERT_EQ(s.processes[i].pid, static_cast<uint32_t>(expect * 10 + i));
      ++expect;
    }
    EXPECT_EQ(expect, 1000) << "depth " << depth;
    EXPECT_FALSE(source.next(s)) << "the end stays the end";
  }
}

TEST(ReadAheadSampleSource, AnErrorComesAfterTheSamplesBeforeIt) {
  CountingSource inner(1000, 500);
  ReadAheadSampleSource source(inner, 16);
  Sample s;
  int got = 0;
  try {
    while (source.next(s)) ++got;
    FAIL() << "the error was lost";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "bad line 500");
  }
  EXPECT_EQ(got, 500);
}

TEST(ReadAheadSampleSource, StoppingEarlyDoesNotWaitForTheRest) {
  CountingSource inner(1'000'000'000);
  {
    ReadAheadSampleSource source(inner, 4);
    Sample s;
    ASSERT_TRUE(source.next(s));
    EXPECT_EQ(s.t, 0);
  }  // the destructor stops and joins the reader, which is blocked on room
  SUCCEED();
}

}  // namespace
}  // namespace gd
