// The window of --since/--until that export, diagnose --prometheus and
// report read: a duration counts back from --until when one is given.
#include "common/time_point.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <stdexcept>
#include <string>

namespace gd {
namespace {

constexpr double kNow = 1732262400;  // 2024-11-22T08:00:00Z

TEST(TimeSpan, DurationCountsBackFromUntil) {
  const TimeSpan w = parse_time_span("1h", "2024-11-21T08:00:00Z", kNow, 3600);
  EXPECT_DOUBLE_EQ(w.end, kNow - 86400);
  EXPECT_DOUBLE_EQ(w.start, kNow - 86400 - 3600);
}

TEST(TimeSpan, DurationWithoutUntilCountsBackFromNow) {
  const TimeSpan w = parse_time_span("2h", "", kNow, 3600);
  EXPECT_DOUBLE_EQ(w.end, kNow);
  EXPECT_DOUBLE_EQ(w.start, kNow - 7200);
}

TEST(TimeSpan, DefaultSpanEndsAtUntil) {
  const TimeSpan w = parse_time_span("", "30m", kNow, 3600);
  EXPECT_DOUBLE_EQ(w.end, kNow - 1800);
  EXPECT_DOUBLE_EQ(w.start, kNow - 1800 - 3600);
}

TEST(TimeSpan, AbsoluteTimesStayAbsolute) {
  const TimeSpan w =
      parse_time_span("2024-11-22T07:00:00Z", "1732262000", kNow, 3600);
  EXPECT_DOUBLE_EQ(w.start, kNow - 3600);
  EXPECT_DOUBLE_EQ(w.end, 1732262000);
}

TEST(TimeSpan, EndBeforeStartIsRefusedWithBothTimes) {
  try {
    parse_time_span("2024-11-22T07:00:00Z", "2024-11-22T06:00:00Z", kNow, 3600);
    FAIL() << "accepted an end before its start";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "2024-11-22T06:00:00Z is before the start "
                 "2024-11-22T07:00:00Z");
  }
  EXPECT_THROW(parse_time_span("yesterday", "", kNow, 3600),
               std::invalid_argument);
}

}  // namespace
}  // namespace gd

// Terminal views show local time with its zone; JSON keeps RFC 3339 UTC.
TEST(TimePoint, LocalTextNamesTheZone) {
  const char* was = std::getenv("TZ");
  const std::string saved = was ? was : "";
  setenv("TZ", "CET-1", 1);  // one hour east of UTC; needs no tzdata
  tzset();
  EXPECT_EQ(gd::local_text(1732262400), "2024-11-22 09:00:00 CET");
  EXPECT_EQ(gd::utc_text(1732262400), "2024-11-22T08:00:00Z");
  EXPECT_EQ(gd::local_text(-1), "");
  if (was)
    setenv("TZ", saved.c_str(), 1);
  else
    unsetenv("TZ");
  tzset();
}
