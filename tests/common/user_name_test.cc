#include "common/user_name.h"

#include <gtest/gtest.h>

namespace gd {

TEST(UserName, RootAndUnknownUid) {
  EXPECT_EQ(user_name_of(0), "root");
  // No passwd entry: the number, so a row still says whose it is.
  EXPECT_EQ(user_name_of(3999999999u), "3999999999");
}

}  // namespace gd
