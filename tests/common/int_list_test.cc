#include "common/int_list.h"

#include <gtest/gtest.h>

namespace gd {

TEST(JoinInts, SentenceAndCellStyles) {
  EXPECT_EQ(join_ints({}), "");
  EXPECT_EQ(join_ints({3}), "3");
  EXPECT_EQ(join_ints({0, 1, 3}), "0, 1, 3");
  EXPECT_EQ(join_ints({0, 1, 3}, ","), "0,1,3");
}

}  // namespace gd
