// What `diagnose --prometheus` reads from a remote-read reply
// (http_client/remote_read_frames.h, xor_chunk.h, instant_grid.h): the
// first byte picks an XOR chunk alone, or a streamed body of frames whose
// messages are ChunkedReadResponses of chunks. Refused in one line, or
// accepted within the bounds: no chunk yields more samples than allowed,
// and the grid gets at most one point per grid time, in time order.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.h"
#include "http_client/instant_grid.h"
#include "http_client/remote_read.pb.h"
#include "http_client/remote_read_frames.h"
#include "http_client/xor_chunk.h"

namespace {

using namespace gd::http::prom;

constexpr size_t kMaxSamples = 4096;

void on_grid(const std::vector<RawSample>& raw, std::string_view input) {
  InstantGrid grid(0, 3600, 15);
  InstantGrid::Cursor c(grid);
  for (const auto& s : raw) c.push(s.t_ms, s.v);
  const auto points = c.finish();
  FUZZ_CHECK(points.size() <= grid.steps(), input);
  for (size_t i = 1; i < points.size(); ++i)
    FUZZ_CHECK(points[i].t > points[i - 1].t, input);
}

void chunk(std::string_view bytes, std::string_view input) {
  std::vector<RawSample> raw;
  const std::string why = decode_xor_chunk(bytes, kMaxSamples, raw);
  FUZZ_CHECK(raw.size() <= kMaxSamples, input);
  FUZZ_CHECK(why.find('\n') == std::string::npos, input);
  if (why.empty()) {
    // What was read is what the writer writes back.
    std::vector<RawSample> again;
    FUZZ_CHECK(
        decode_xor_chunk(encode_xor_chunk(raw), kMaxSamples, again) == "",
        input);
    FUZZ_CHECK(again.size() == raw.size(), input);
  }
  on_grid(raw, input);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::string_view rest = input.substr(1);
  if (data[0] % 2 == 0) {
    chunk(rest, input);
    return 0;
  }
  FrameReader frames(1 << 16, [&](std::string_view message) {
    gd::remote::ChunkedReadResponse r;
    if (!r.ParseFromArray(message.data(), static_cast<int>(message.size())))
      return std::string("not a ChunkedReadResponse");
    for (const auto& s : r.chunked_series())
      for (const auto& c : s.chunks()) chunk(c.data(), input);
    return std::string();
  });
  // In two pieces, as a body arrives.
  const size_t half = rest.size() / 2;
  if (frames.feed(rest.substr(0, half)).empty()) frames.feed(rest.substr(half));
  FUZZ_CHECK(frames.finish().find('\n') == std::string::npos, input);
  return 0;
}
