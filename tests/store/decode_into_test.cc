// decode_block_into: a scan decodes block after block into one vector of
// samples, and copies a sample from the one before when their rest lines
// are equal but for the time. Neither may change what comes out.
#include <gtest/gtest.h>
#include <zstd.h>

#include <string>
#include <vector>

#include "store/block_codec.h"
#include "store_test_util.h"
#include "trace/model_compare.h"

namespace gd::store {
namespace {

using testing::kT0;
using testing::make_sample;

void expect_all_same(const std::vector<Sample>& in,
                     const std::vector<Sample>& out) {
  ASSERT_EQ(in.size(), out.size());
  for (size_t i = 0; i < in.size(); ++i) {
    SCOPED_TRACE("sample " + std::to_string(i));
    gd::testing::expect_same(in[i], out[i]);
    EXPECT_EQ(sample_to_json(in[i]), sample_to_json(out[i]));
  }
}

// Samples whose rest lines mostly repeat, with a change now and then: an
// event, a GPU lost, a process and GPU process list that changes.
std::vector<Sample> varied(double t0, int n, int gpus) {
  std::vector<Sample> out;
  for (int i = 0; i < n; ++i) {
    Sample s = make_sample(t0 + i, i, gpus);
    if (i % 17 == 5) {
      Event e;
      e.kind = "xid";
      e.gpu = 0;
      e.code = 79;
      e.text = "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus";
      s.events.push_back(e);
    }
    if (i >= 20 && i < 23) {
      GpuSample lost;
      lost.index = s.gpus.back().index;
      lost.lost = true;
      s.gpus.back() = lost;
    }
    if (i >= 30) s.processes.pop_back();
    if (i % 11 == 3) s.gpus[0].processes.reset();
    if (i >= 40) s.gpus[0].clock_event_reasons = {"sw_power_cap"};
    out.push_back(s);
  }
  return out;
}

TEST(DecodeInto, ReusedSamplesComeOutAsAFreshDecodeGivesThem) {
  const auto a = varied(kT0, 60, 3);
  const auto b = varied(kT0 + 600, 25, 2);
  const auto enc_a = encode_block(a, 3), enc_b = encode_block(b, 3);
  std::vector<Sample> reused;
  decode_block_into(enc_a.numeric, enc_a.rest, reused);
  expect_all_same(a, reused);
  // Fewer samples, GPUs and processes than the samples already there.
  decode_block_into(enc_b.numeric, enc_b.rest, reused);
  expect_all_same(b, reused);
  expect_all_same(b, decode_block(enc_b.numeric, enc_b.rest));
  decode_block_into(enc_a.numeric, enc_a.rest, reused);
  expect_all_same(a, reused);
}

std::string zstd_of(const std::string& raw) {
  std::string out(ZSTD_compressBound(raw.size()), '\0');
  const size_t n =
      ZSTD_compress(out.data(), out.size(), raw.data(), raw.size(), 3);
  EXPECT_FALSE(ZSTD_isError(n));
  out.resize(n);
  return out;
}

// The block's rest text with line `k`'s time written as `t`.
std::string with_time(const EncodedBlock& enc, size_t k, const std::string& t) {
  std::string buf;
  std::string text(decompress_rest(enc.rest, buf));
  size_t begin = 0;
  for (size_t i = 0; i < k; ++i) begin = text.find('\n', begin) + 1;
  const size_t from = begin + std::string("{\"t\":").size();
  text.replace(from, text.find(',', from) - from, t);
  return text;
}

TEST(DecodeInto, ARepeatedLineWithABadTimeIsRejectedLikeAnyOther) {
  std::vector<Sample> in;
  for (int i = 0; i < 4; ++i) in.push_back(make_sample(kT0 + i, 0, 2));
  const auto enc = encode_block(in, 3);
  for (const char* bad :
       {"-1", "4102444801", "1e999", "\"x\"", "01", "1.", "null", "NaN"}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW(decode_block(enc.numeric, zstd_of(with_time(enc, 2, bad))),
                 CodecError);
  }
  // Times the line's parse takes, however written: the column's time wins.
  for (const char* good : {"0", "1e3", "-0", " 17.5", "1732262402.000"}) {
    SCOPED_TRACE(good);
    expect_all_same(
        in, decode_block(enc.numeric, zstd_of(with_time(enc, 2, good))));
  }
}

}  // namespace
}  // namespace gd::store
