#include "views/format.h"

#include <gtest/gtest.h>

namespace gd {

TEST(HumanBytes, UsesBinaryUnits) {
  EXPECT_EQ(human_bytes(0), "0 B");
  EXPECT_EQ(human_bytes(1023), "1023 B");
  EXPECT_EQ(human_bytes(1536), "1.5 KiB");
  EXPECT_EQ(human_bytes(85899345920ull), "80.0 GiB");
}

TEST(HumanElapsed, PicksTheTwoLargestUnits) {
  EXPECT_EQ(human_elapsed(37), "37s");
  EXPECT_EQ(human_elapsed(252), "4m12s");
  EXPECT_EQ(human_elapsed(2 * 3600 + 3 * 60 + 59), "2h03m");
  EXPECT_EQ(human_elapsed(3 * 86400 + 4 * 3600), "3d04h");
  EXPECT_EQ(human_elapsed(-1), "n/a");
}

TEST(Ellipsize, CutsLongTextOnly) {
  EXPECT_EQ(ellipsize("python", 10), "python");
  EXPECT_EQ(ellipsize("python train.py", 8), "python ~");
}

}  // namespace gd
