#include "common/crc32c.h"

#include <gtest/gtest.h>

#include <string>

namespace gd {
namespace {

TEST(Crc32c, KnownCheckValues) {
  // The check value of CRC-32C (RFC 3720's iSCSI CRC): "123456789".
  EXPECT_EQ(crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(crc32c(""), 0u);
  // RFC 3720 B.4: 32 bytes of zeros, and of 0xFF.
  EXPECT_EQ(crc32c(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(crc32c(std::string(32, '\xFF')), 0x62A8AB43u);
}

TEST(Crc32c, ContinuesAcrossPieces) {
  const std::string all = "remote read frame";
  EXPECT_EQ(crc32c(all.substr(7), crc32c(all.substr(0, 7))), crc32c(all));
}

}  // namespace
}  // namespace gd
