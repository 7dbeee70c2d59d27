#include "common/elapsed_text.h"

#include <gtest/gtest.h>

#include <cmath>

namespace gd {

TEST(ElapsedCompact, PicksTheTwoLargestUnits) {
  EXPECT_EQ(elapsed_compact(37), "37s");
  EXPECT_EQ(elapsed_compact(252), "4m12s");
  EXPECT_EQ(elapsed_compact(2 * 3600 + 3 * 60 + 59), "2h03m");
  EXPECT_EQ(elapsed_compact(3 * 86400 + 4 * 3600), "3d04h");
  EXPECT_EQ(elapsed_compact(-1), "n/a");
  EXPECT_EQ(elapsed_compact(std::nan("")), "n/a");
}

TEST(ElapsedWords, RoundsToTheUnitShown) {
  EXPECT_EQ(elapsed_words(45), "45 s");
  EXPECT_EQ(elapsed_words(119.6), "2 min");
  EXPECT_EQ(elapsed_words(600), "10 min");
  EXPECT_EQ(elapsed_words(2 * 3600 + 5 * 60), "2 h 05 min");
  EXPECT_EQ(elapsed_words(3 * 86400 + 4 * 3600), "3 d 04 h");
  EXPECT_EQ(elapsed_words(-5), "0 s");
}

TEST(ElapsedDecimal, OneNumberAndAUnit) {
  EXPECT_EQ(elapsed_decimal(45), "45s");
  EXPECT_EQ(elapsed_decimal(600), "10m");
  EXPECT_EQ(elapsed_decimal(9000), "2.5h");
  EXPECT_EQ(elapsed_decimal(3.5 * 86400), "3.5d");
}

}  // namespace gd
