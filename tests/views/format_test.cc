#include "views/format.h"

#include <gtest/gtest.h>

namespace gd {

TEST(Ellipsize, CutsLongTextOnly) {
  EXPECT_EQ(ellipsize("python", 10), "python");
  EXPECT_EQ(ellipsize("python train.py", 8), "python ~");
}

}  // namespace gd
