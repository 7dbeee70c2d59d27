#include "common/bytes_text.h"

#include <gtest/gtest.h>

namespace gd {

TEST(HumanBytes, UsesBinaryUnitsWithOneDecimal) {
  EXPECT_EQ(human_bytes(0), "0 B");
  EXPECT_EQ(human_bytes(1023), "1023 B");
  EXPECT_EQ(human_bytes(1536), "1.5 KiB");
  EXPECT_EQ(human_bytes(512ull << 20), "512.0 MiB");
  EXPECT_EQ(human_bytes(85899345920ull), "80.0 GiB");
  EXPECT_EQ(human_bytes(3ull << 40), "3.0 TiB");
}

TEST(HumanBytesBrief, WholeKiBAndMiBTenthsFromGiB) {
  EXPECT_EQ(human_bytes_brief(0), "0 B");
  EXPECT_EQ(human_bytes_brief(512ull << 10), "512 KiB");
  EXPECT_EQ(human_bytes_brief(400ull << 20), "400 MiB");
  EXPECT_EQ(human_bytes_brief(30ull << 30), "30.0 GiB");
  EXPECT_EQ(human_bytes_brief((3ull << 40) / 2), "1.5 TiB");
}

TEST(GibText, AlwaysGiB) {
  EXPECT_EQ(gib_text(0), "0.0 GiB");
  EXPECT_EQ(gib_text(512ull << 20), "0.5 GiB");
  EXPECT_EQ(gib_text(85040352051ull), "79.2 GiB");
  EXPECT_EQ(gib_text(2ull << 40), "2048.0 GiB");
}

}  // namespace gd
