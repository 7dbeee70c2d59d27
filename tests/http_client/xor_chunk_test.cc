// Prometheus' XOR chunks: a chunk worked out by hand from the format, the
// writer and reader round trip on every branch of the encoding, and a
// broken chunk is refused in one line instead of read past its end.
#include "http_client/xor_chunk.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace gd::http::prom {
namespace {

std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int x : b) s.push_back(static_cast<char>(x));
  return s;
}

TEST(XorChunk, AChunkWorkedOutByHand) {
  // 2 samples; t0 = 1000 ms as a zig-zag varint (2000: D0 0F); 1.5 as its
  // 64 bits; the delta 15000 as a varint (98 75); the same value: one 0
  // bit, padded.
  const std::string chunk = bytes(
      {0x00, 0x02, 0xD0, 0x0F, 0x3F, 0xF8, 0, 0, 0, 0, 0, 0, 0x98, 0x75, 0x00});
  std::vector<RawSample> out;
  ASSERT_EQ(decode_xor_chunk(chunk, 100, out), "");
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].t_ms, 1000);
  EXPECT_EQ(out[0].v, 1.5);
  EXPECT_EQ(out[1].t_ms, 16000);
  EXPECT_EQ(out[1].v, 1.5);
  EXPECT_EQ(encode_xor_chunk(out), chunk);
}

TEST(XorChunk, EveryBranchRoundTrips) {
  const double stale = std::bit_cast<double>(0x7ff0000000000002ull);
  std::vector<RawSample> in;
  int64_t t = -5000;  // a first time before 1970 is a negative varint
  const int64_t steps[] = {15000,
                           15000,
                           15001,
                           14990,
                           15000 + 8192,
                           15000 - 8191,
                           15000 + 65536,
                           15000 + 524288,
                           15000 + 5000000000LL,
                           15000,
                           1,
                           15000};
  const double values[] = {
      1.5, 1.5,   2.5, -7.25, 1e300, 3.0,
      NAN, stale, 0.0, -0.0,  42,    std::numeric_limits<double>::infinity(),
      0.1};
  in.push_back({t, values[0]});
  for (size_t i = 0; i < std::size(steps); ++i) {
    t += steps[i];
    in.push_back({t, values[i + 1]});
  }
  std::vector<RawSample> out;
  ASSERT_EQ(decode_xor_chunk(encode_xor_chunk(in), 100, out), "");
  ASSERT_EQ(out.size(), in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(out[i].t_ms, in[i].t_ms) << i;
    EXPECT_EQ(std::bit_cast<uint64_t>(out[i].v),
              std::bit_cast<uint64_t>(in[i].v))
        << i;
  }
}

TEST(XorChunk, ADayOfAGaugeIsSmall) {
  // A temperature scraped every 15 s for 2 h: a few bits a sample.
  std::vector<RawSample> in;
  for (int i = 0; i < 480; ++i) in.push_back({i * 15000LL, 60.0 + i % 7});
  const std::string chunk = encode_xor_chunk(in);
  EXPECT_LT(chunk.size(), in.size() * 4);
  std::vector<RawSample> out;
  ASSERT_EQ(decode_xor_chunk(chunk, 480, out), "");
  EXPECT_EQ(out.back().v, 60.0 + 479 % 7);
}

TEST(XorChunk, ABrokenChunkIsRefused) {
  std::vector<RawSample> in;
  for (int i = 0; i < 20; ++i) in.push_back({i * 15000LL, i * 0.5});
  const std::string chunk = encode_xor_chunk(in);
  for (size_t cut = 0; cut < chunk.size(); ++cut) {
    std::vector<RawSample> out;
    EXPECT_NE(decode_xor_chunk(chunk.substr(0, cut), 100, out), "") << cut;
  }
  std::vector<RawSample> out;
  EXPECT_EQ(decode_xor_chunk(chunk, 19, out),
            "an XOR chunk of 20 samples, over the 19 left");
  // A count far beyond the bytes: refused when the bits run out.
  EXPECT_EQ(decode_xor_chunk(bytes({0xFF, 0xFF, 0x02}), 70000, out),
            "an XOR chunk that ends before its 65535 samples");
}

}  // namespace
}  // namespace gd::http::prom
