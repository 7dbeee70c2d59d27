// ByteReader::skip_varints (store/byte_io.h): lands where reading the
// varints one by one does, whatever their lengths, and refuses what
// varint() refuses.
#include <gtest/gtest.h>

#include <random>

#include "store/byte_io.h"

namespace gd::store {
namespace {

TEST(SkipVarints, LandsWhereReadingThemDoes) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 200; ++round) {
    ByteWriter w;
    const size_t count = rng() % 100;
    for (size_t i = 0; i < count; ++i) {
      // Mostly one byte, some of every other length up to ten.
      const int bits = rng() % 3 ? 7 : static_cast<int>(rng() % 64) + 1;
      w.varint(bits == 64 ? rng() : rng() & ((uint64_t{1} << bits) - 1));
    }
    w.byte(0x55);  // what follows the column
    for (size_t m = 0; m <= count; m += 1 + count / 7) {
      ByteReader one(w.data()), skip(w.data());
      for (size_t i = 0; i < m; ++i) one.varint();
      skip.skip_varints(m);
      ASSERT_EQ(skip.left(), one.left()) << "round " << round << ", m " << m;
    }
  }
}

TEST(SkipVarints, RefusesWhatVarintRefuses) {
  // Ten continuation bytes: too long, wherever the word boundaries fall.
  for (int lead = 0; lead < 9; ++lead) {
    std::string bytes(static_cast<size_t>(lead), '\x01');
    bytes += std::string(10, '\x80');
    bytes += std::string(8, '\x01');
    ByteReader r(bytes);
    EXPECT_THROW(r.skip_varints(static_cast<size_t>(lead) + 1), CodecError)
        << lead;
    ByteReader ok(bytes);
    EXPECT_NO_THROW(ok.skip_varints(static_cast<size_t>(lead)));
  }
  // The longest varint there is (nine continuation bytes) is fine.
  std::string longest =
      std::string(9, '\x80') + '\x01' + std::string(9, '\x02');
  ByteReader r(longest);
  r.skip_varints(10);
  EXPECT_EQ(r.left(), 0u);
  // Fewer varints than asked for: truncated.
  const std::string twelve(12, '\x01');  // the reader only views its bytes
  ByteReader short_one(twelve);
  EXPECT_THROW(short_one.skip_varints(13), CodecError);
}

}  // namespace
}  // namespace gd::store
