#include "common/crc32c.h"

#include <array>

namespace gd {
namespace {

// The reflected polynomial 0x82F63B78, one table entry per byte value.
constexpr std::array<uint32_t, 256> make_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int bit = 0; bit < 8; ++bit)
      c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    table[i] = c;
  }
  return table;
}

constexpr auto kTable = make_table();

}  // namespace

uint32_t crc32c(std::string_view data, uint32_t crc) {
  crc = ~crc;
  for (unsigned char byte : data)
    crc = kTable[(crc ^ byte) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

}  // namespace gd
