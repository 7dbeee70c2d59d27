#include "common/duration.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace gd {
namespace {

TEST(Duration, UnitsEverywhereTheSame) {
  EXPECT_DOUBLE_EQ(parse_duration("500ms"), 0.5);
  EXPECT_DOUBLE_EQ(parse_duration("1s"), 1);
  EXPECT_DOUBLE_EQ(parse_duration("10m"), 600);
  EXPECT_DOUBLE_EQ(parse_duration("10min"), 600);
  EXPECT_DOUBLE_EQ(parse_duration("24h"), 86400);
  EXPECT_DOUBLE_EQ(parse_duration("7d"), 7 * 86400.0);
  EXPECT_DOUBLE_EQ(parse_duration("2w"), 14 * 86400.0);
  EXPECT_DOUBLE_EQ(parse_duration("1.5h"), 5400);
  EXPECT_DOUBLE_EQ(parse_duration("0.3"), 0.3);
}

TEST(Duration, PlainNumberIsSecondsAndDecimal) {
  EXPECT_DOUBLE_EQ(parse_duration("90"), 90);
  EXPECT_DOUBLE_EQ(parse_duration("010"), 10);  // never octal
  EXPECT_DOUBLE_EQ(parse_duration("0"), 0);
}

TEST(Duration, RejectsWhatIsNotADuration) {
  for (const char* bad : {"",     "-1s",   "+1s",  "nan", "inf", "-inf", "1e3",
                          "0x10", " 1s",   "1s ",  "1 s", "1.",  ".5",   "5x",
                          "1sec", "1h30m", "1,5s", "s",   "ms",  "NaN"}) {
    std::string error;
    EXPECT_FALSE(try_parse_duration(bad, &error)) << bad;
    EXPECT_NE(error.find("invalid duration '" + std::string(bad) + "'"),
              std::string::npos)
        << error;
    EXPECT_THROW(parse_duration(bad), std::invalid_argument) << bad;
  }
}

TEST(Duration, RejectsOverflow) {
  EXPECT_FALSE(try_parse_duration("99999999999999999999999999h"));
  EXPECT_FALSE(try_parse_duration(std::string(400, '9')));
  EXPECT_FALSE(try_parse_duration("5300w"));  // ~101 years
  EXPECT_TRUE(try_parse_duration("36500d"));  // 100 years
  std::string error;
  try_parse_duration("1000000000000d", &error);
  EXPECT_NE(error.find("too long"), std::string::npos) << error;
}

TEST(Duration, RangeCheckNamesTheRange) {
  DurationRange interval{0.01, 3600};
  EXPECT_DOUBLE_EQ(parse_duration_in("10ms", interval), 0.01);
  EXPECT_DOUBLE_EQ(parse_duration_in("1h", interval), 3600);
  try {
    parse_duration_in("0", interval);
    FAIL() << "0 accepted as an interval";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "'0' is out of range 10ms..1h");
  }
  EXPECT_THROW(parse_duration_in("61m", interval), std::invalid_argument);
  EXPECT_THROW(parse_duration_in("9ms", interval), std::invalid_argument);
  EXPECT_EQ(check_duration_range("2s", 2, interval), "");
}

TEST(Duration, TextIsTheShortestExactUnit) {
  EXPECT_EQ(duration_text(0.01), "10ms");
  EXPECT_EQ(duration_text(60), "1m");
  EXPECT_EQ(duration_text(90), "90s");
  EXPECT_EQ(duration_text(30 * 86400.0), "30d");
  EXPECT_EQ(duration_text(14 * 86400.0), "2w");
  EXPECT_EQ(duration_text(3650 * 86400.0), "3650d");
  EXPECT_EQ(duration_text(0), "0s");
  EXPECT_EQ(duration_range_text({1, 30 * 86400.0}), "1s..30d");
}

}  // namespace
}  // namespace gd
