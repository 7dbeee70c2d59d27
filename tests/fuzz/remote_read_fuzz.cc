// What `diagnose --prometheus` reads from a remote-read reply
// (http_client/remote_read_frames.h, xor_chunk.h, instant_grid.h,
// remote_read_series.h) and from a query_range reply (prometheus_decode.h):
// the first byte picks an XOR chunk alone, a streamed body of frames whose
// messages are ChunkedReadResponses of chunks, the same frames or a decoded
// samples reply (ReadResponse) put on the grid by the client's own reader
// under small limits, or a range query's JSON under a small budget. Refused
// in one line, or accepted within the bounds: no chunk yields more samples
// than allowed, the grid gets at most one point per grid time, in time
// order; no reply gives more series, points, labels or label bytes than
// its limits, and one that sends more series messages than 16 per series
// of the bound (empty ones too) is refused.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.h"
#include "http_client/instant_grid.h"
#include "http_client/prometheus_decode.h"
#include "http_client/remote_read.pb.h"
#include "http_client/remote_read_frames.h"
#include "http_client/remote_read_series.h"
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

// Small limits, so that the input reaches them.
Limits small_limits() {
  Limits l;
  l.max_series = 4;
  l.max_points = 64;
  l.max_labels = 4;
  l.max_label_bytes = 16;
  return l;
}

void check_series(const std::vector<Series>& out, const Limits& l,
                  std::string_view input) {
  FUZZ_CHECK(out.size() <= l.max_series, input);
  size_t points = 0;
  for (const Series& s : out) {
    points += s.points.size();
    FUZZ_CHECK(s.labels.size() <= l.max_labels, input);
    for (const auto& [name, value] : s.labels)
      // Cut to the bound, plus cap_text's mark of what was cut.
      FUZZ_CHECK(name.size() <= l.max_label_bytes + 64 &&
                     value.size() <= l.max_label_bytes + 64,
                 input);
  }
  FUZZ_CHECK(points <= l.max_points, input);
}

// The client's own reader of a reply: frames (`streamed`) or a decoded
// samples reply, on a grid of 0..3600 s at 15 s.
void reply(std::string_view body, bool streamed, std::string_view input) {
  const Limits l = small_limits();
  InstantGrid grid(0, 3600, 15);
  RemoteReadSeries series(grid, l);
  std::string why;
  if (streamed) {
    FrameReader frames(1 << 16, [&](std::string_view message) {
      return series.chunked(message);
    });
    why = frames.feed(body);
    if (why.empty()) why = frames.finish();
  } else {
    why = series.samples(body);
  }
  FUZZ_CHECK(why.find('\n') == std::string::npos, input);
  if (!why.empty()) return;
  std::vector<Series> out;
  why = series.take(out);
  FUZZ_CHECK(why.find('\n') == std::string::npos, input);
  if (why.empty()) check_series(out, l, input);
}

// A range query's reply under a budget left of 3 series and 40 points.
void matrix(std::string_view body, std::string_view input) {
  const Limits l = small_limits();
  const Budget budget{3, 40};
  std::vector<Series> out;
  const std::string why = decode_matrix(body, l, budget, out);
  FUZZ_CHECK(why.find('\n') == std::string::npos, input);
  if (!why.empty()) return;
  Limits within = l;
  within.max_series = budget.series;
  within.max_points = budget.points;
  check_series(out, within, input);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::string_view rest = input.substr(1);
  switch (data[0] % 5) {
    case 0:
      chunk(rest, input);
      return 0;
    case 2:
      reply(rest, true, input);
      return 0;
    case 3:
      reply(rest, false, input);
      return 0;
    case 4:
      matrix(rest, input);
      return 0;
    default:
      break;
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
