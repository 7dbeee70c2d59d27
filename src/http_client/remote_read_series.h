// One remote-read reply's series put on the grid as its messages arrive
// (internal to prometheus_remote_read.cc, and fuzzed on its own): each
// series message walked one at a time (remote_read_wire.h) and counted,
// empty or not, before it is built; each raw sample onto its series' grid
// (instant_grid.h), the points counted against the bound as they are made.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "http_client/instant_grid.h"
#include "http_client/prometheus_api.h"
#include "http_client/xor_chunk.h"

namespace gd::http::prom {

// Raw samples decoded per call, against the grid points kept: a 1 s scrape
// read at a 15 s step decodes 15 samples a point.
inline constexpr size_t kRawPerPoint = 64;
// Series messages per reply, against the series bound: Prometheus splits a
// series whose chunks pass a frame's size over several frames, each naming
// it again. Empty ones count too (64 MiB of them are 33 million).
inline constexpr size_t kMessagesPerSeries = 16;

class RemoteReadSeries {
 public:
  // `grid` and `limits` outlive this.
  RemoteReadSeries(const InstantGrid& grid, const Limits& limits);

  // One streamed frame's ChunkedReadResponse; "" or why refused.
  std::string chunked(std::string_view message);
  // A decoded ReadResponse of samples; "" or why refused.
  std::string samples(std::string_view response);
  // The series on the grid, those with points; "" or why refused (over the
  // points bound).
  std::string take(std::vector<Series>& out);

 private:
  std::string count_message();
  // The cursor of the series of these (protobuf) labels; "" or why not.
  template <class LabelList>
  std::string cursor(const LabelList& labels, InstantGrid::Cursor*& out);
  bool push(InstantGrid::Cursor& c, int64_t t_ms, double v);
  std::string too_many_points() const;

  const InstantGrid& grid_;
  const Limits& limits_;
  std::map<std::string, size_t> index_;
  std::vector<Labels> labels_;
  std::vector<InstantGrid::Cursor> cursors_;
  std::vector<RawSample> raw_;
  size_t raw_left_;
  size_t messages_left_;
  size_t points_ = 0;  // put on the grid so far, all series
};

}  // namespace gd::http::prom
