// Client::read_grid: Prometheus' remote-read API. The request is a
// snappy-compressed ReadRequest naming every selector; the reply is either
// a stream of frames of XOR chunks (Prometheus 2.13+, asked for first) or
// one snappy-compressed ReadResponse of samples. Both are decoded as they
// are bounded: frames as they arrive, samples straight onto the grid, so a
// node's window never holds its raw samples, and each message's series one
// at a time (remote_read_wire.h), every one counted, empty or not, before
// it is built.
#include <snappy.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>

#include "common/terminal_text.h"
#include "http_client/instant_grid.h"
#include "http_client/prometheus_api.h"
#include "http_client/prometheus_internal.h"
#include "http_client/remote_read.pb.h"
#include "http_client/remote_read_frames.h"
#include "http_client/remote_read_wire.h"
#include "http_client/xor_chunk.h"

namespace gd::http::prom {
namespace {

constexpr std::string_view kStreamedType =
    "application/x-streamed-protobuf; proto=prometheus.ChunkedReadResponse";
// Prometheus writes frames of at most 1 MiB
// (--storage.remote.read-max-bytes-in-frame); a frame is one series' chunks
// at least, so allow more.
constexpr size_t kMaxFrameBytes = 16 << 20;
// Raw samples decoded per call, against the grid points kept: a 1 s scrape
// read at a 15 s step decodes 15 samples a point.
constexpr size_t kRawPerPoint = 64;
// Series messages per reply, against the series bound: Prometheus splits a
// series whose chunks pass a frame's size over several frames, each naming
// it again. Empty ones count too (64 MiB of them are 33 million).
constexpr size_t kMessagesPerSeries = 16;

remote::LabelMatcher::Type type_of(Matcher::Op op) {
  switch (op) {
    case Matcher::Op::kEq:
      return remote::LabelMatcher::EQ;
    case Matcher::Op::kNeq:
      return remote::LabelMatcher::NEQ;
    case Matcher::Op::kRe:
      return remote::LabelMatcher::RE;
    case Matcher::Op::kNre:
      return remote::LabelMatcher::NRE;
  }
  return remote::LabelMatcher::EQ;
}

std::string request_body(const std::vector<Selector>& selectors,
                         const InstantGrid& grid) {
  remote::ReadRequest req;
  for (const Selector& sel : selectors) {
    remote::Query* q = req.add_queries();
    // From a lookback before the first grid time: its value may be older.
    q->set_start_timestamp_ms(grid.first_ms() - grid.lookback_ms());
    q->set_end_timestamp_ms(grid.last_ms());
    for (const Matcher& m : sel) {
      remote::LabelMatcher* lm = q->add_matchers();
      lm->set_type(type_of(m.op));
      lm->set_name(m.name);
      lm->set_value(m.value);
    }
  }
  req.add_accepted_response_types(remote::ReadRequest::STREAMED_XOR_CHUNKS);
  req.add_accepted_response_types(remote::ReadRequest::SAMPLES);
  std::string compressed;
  const std::string raw = req.SerializeAsString();
  snappy::Compress(raw.data(), raw.size(), &compressed);
  return compressed;
}

// One reply's series, each on the grid as its samples arrive.
class GridSeries {
 public:
  GridSeries(const InstantGrid& grid, const Limits& limits)
      : grid_(grid), limits_(limits) {
    raw_left_ = limits.max_points * kRawPerPoint;
    messages_left_ = limits.max_series * kMessagesPerSeries;
  }

  // One more series message; "" or why refused.
  std::string count_message() {
    if (messages_left_ == 0)
      return "more than " +
             std::to_string(limits_.max_series * kMessagesPerSeries) +
             " series messages (empty ones too); narrow the query";
    --messages_left_;
    return "";
  }

  // The cursor of the series of these labels; "" or why refused.
  template <class LabelList>
  std::string cursor(const LabelList& labels, InstantGrid::Cursor*& out) {
    if (static_cast<size_t>(labels.size()) > limits_.max_labels)
      return "a series has more than " + std::to_string(limits_.max_labels) +
             " labels";
    Labels set;
    for (const auto& l : labels)
      set.emplace_back(capped(l.name(), limits_.max_label_bytes),
                       capped(l.value(), limits_.max_label_bytes));
    std::sort(set.begin(), set.end());
    auto [it, fresh] = index_.try_emplace(key_of(set), labels_.size());
    if (fresh) {
      if (labels_.size() == limits_.max_series)
        return "more than " + std::to_string(limits_.max_series) +
               " series; narrow the query";
      labels_.push_back(std::move(set));
      cursors_.emplace_back(grid_);
    }
    out = &cursors_[it->second];
    return "";
  }

  std::string chunked(std::string_view message) {
    // ChunkedReadResponse: chunked_series = 1.
    return each_message(message, 1, [&](std::string_view bytes) {
      if (auto why = count_message(); !why.empty()) return why;
      remote::ChunkedSeries s;
      if (!s.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
        return std::string("a remote-read frame is not a ChunkedReadResponse");
      InstantGrid::Cursor* c = nullptr;
      if (auto why = cursor(s.labels(), c); !why.empty()) return why;
      for (const auto& chunk : s.chunks()) {
        // Histograms have no float value for the trace model.
        if (chunk.type() != remote::Chunk::XOR) continue;
        raw_.clear();
        if (auto why = decode_xor_chunk(chunk.data(), raw_left_, raw_);
            !why.empty())
          return why;
        raw_left_ -= raw_.size();
        for (const RawSample& x : raw_)
          if (!push(*c, x.t_ms, x.v)) return too_many_points();
      }
      return std::string();
    });
  }

  // A ReadResponse: results = 1, each a QueryResult whose timeseries = 1.
  std::string samples(std::string_view response) {
    return each_message(response, 1, [&](std::string_view result) {
      return each_message(result, 1, [&](std::string_view bytes) {
        if (auto why = count_message(); !why.empty()) return why;
        remote::TimeSeries s;
        if (!s.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
          return std::string("the remote-read reply is not a ReadResponse");
        InstantGrid::Cursor* c = nullptr;
        if (auto why = cursor(s.labels(), c); !why.empty()) return why;
        if (static_cast<size_t>(s.samples_size()) > raw_left_)
          return "more than " +
                 std::to_string(limits_.max_points * kRawPerPoint) +
                 " raw samples";
        raw_left_ -= static_cast<size_t>(s.samples_size());
        for (const auto& x : s.samples())
          if (!push(*c, x.timestamp(), x.value())) return too_many_points();
        return std::string();
      });
    });
  }

  // The series on the grid; "" or why refused (over the points bound).
  std::string take(std::vector<Series>& out) {
    size_t points = 0;
    for (size_t i = 0; i < labels_.size(); ++i) {
      Series s{std::move(labels_[i]), cursors_[i].finish()};
      points += s.points.size();
      if (points > limits_.max_points) return too_many_points();
      if (!s.points.empty()) out.push_back(std::move(s));
    }
    return "";
  }

 private:
  // A raw sample onto its series' grid, counting the points it gives there
  // against the bound as they are made (not after every cursor is full);
  // false once the points are over it.
  bool push(InstantGrid::Cursor& c, int64_t t_ms, double v) {
    const size_t before = c.points();
    c.push(t_ms, v);
    points_ += c.points() - before;
    return points_ <= limits_.max_points;
  }
  std::string too_many_points() const {
    return "more than " + std::to_string(limits_.max_points) +
           " points; ask for a shorter range or a longer step";
  }

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

// What one try got.
struct Try {
  enum class End { kDone, kRetry, kFail, kUnsupported } end = End::kFail;
  std::string why;
};

Try one_try(const Url& url, const Credentials& who, const Limits& limits,
            const std::string& body, double total_s, GridSeries& series,
            RequestCancel& cancel) {
  Request req;
  req.method = "POST";
  req.path = "/api/v1/read";
  req.body = body;
  req.content_type = "application/x-protobuf";
  req.headers = {{"Content-Encoding", "snappy"},
                 {"X-Prometheus-Remote-Read-Version", "0.1.0"},
                 {"Accept", std::string(kStreamedType)}};
  req.total_s = total_s;
  req.max_body_bytes = limits.max_body_bytes;
  bool streamed = false;
  std::string whole, refused;
  size_t bytes = 0;
  FrameReader frames(kMaxFrameBytes, [&](std::string_view message) {
    return series.chunked(message);
  });
  req.on_head = [&](const Reply& head) {
    streamed = head.status == 200 &&
               head.header("Content-Type")
                   .starts_with("application/x-streamed-protobuf");
    return true;
  };
  req.on_body = [&](std::string_view piece) {
    bytes += piece.size();
    if (bytes > limits.max_body_bytes) {
      refused = "a reply of more than " +
                std::to_string(limits.max_body_bytes) + " bytes";
      return false;
    }
    if (!streamed) {
      whole.append(piece);
      return true;
    }
    refused = frames.feed(piece);
    return refused.empty();
  };
  Reply r = send(url, who, req, cancel);
  if (!refused.empty()) return {Try::End::kFail, refused};
  if (!r.ok) return {Try::End::kRetry, r.error};
  const std::string type = r.header("Content-Type");
  if (r.status >= 500)
    return {Try::End::kRetry, "HTTP " + std::to_string(r.status) + ": " +
                                  terminal_safe(whole, 200)};
  if (r.status != 200)
    return {Try::End::kUnsupported, "HTTP " + std::to_string(r.status) + ": " +
                                        terminal_safe(whole, 200)};
  if (streamed) {
    if (auto why = frames.finish(); !why.empty()) return {Try::End::kFail, why};
    return {Try::End::kDone, ""};
  }
  if (!type.starts_with("application/x-protobuf"))
    return {Try::End::kUnsupported,
            "the reply is not remote read's (Content-Type: " +
                terminal_safe(type, 100) + ")"};
  // The decoded size is bounded as the body is, before decoding; the
  // compressed body is let go once decoded.
  size_t size = 0;
  std::string raw;
  if (!snappy::GetUncompressedLength(whole.data(), whole.size(), &size) ||
      size > limits.max_body_bytes ||
      !snappy::Uncompress(whole.data(), whole.size(), &raw))
    return {Try::End::kFail, "the remote-read reply is not snappy within " +
                                 std::to_string(limits.max_body_bytes) +
                                 " bytes"};
  std::string().swap(whole);
  if (auto why = series.samples(raw); !why.empty())
    return {Try::End::kFail, why};
  return {Try::End::kDone, ""};
}

}  // namespace

Result Client::read_grid(const std::vector<Selector>& selectors, double start,
                         double end, double step_s,
                         RequestCancel& cancel) const {
  if (!(step_s > 0) || !std::isfinite(start) || !std::isfinite(end) ||
      end < start)
    return fail("remote read: the range or step is not valid");
  const double per_series = (end - start) / step_s + 1;
  if (per_series > static_cast<double>(limits_.max_points))
    return fail("remote read: " + number_text(per_series) +
                " points per series are more than " +
                std::to_string(limits_.max_points) +
                "; ask for a shorter range or a longer step");
  const InstantGrid grid(start, end, step_s);
  const std::string body = request_body(selectors, grid);
  const std::string where = url_.text + "/api/v1/read";
  const auto deadline = after(limits_.total_s);
  double backoff = limits_.backoff_s;
  std::string last;
  int tries = 0;
  for (; tries < std::max(1, limits_.tries); ++tries) {
    if (tries > 0) {
      if (seconds_left(deadline) <= backoff) break;
      if (!pause(backoff, cancel)) return fail(where + ": stopped");
      backoff *= 2;
    }
    const double left = seconds_left(deadline);
    if (left <= 0) break;
    // A try that failed half way starts again from nothing.
    GridSeries series(grid, limits_);
    Try t = one_try(url_, who_, limits_, body,
                    std::min(limits_.request_s, left), series, cancel);
    if (cancel.cancelled()) return fail(where + ": stopped");
    switch (t.end) {
      case Try::End::kRetry:
        last = t.why;
        continue;
      case Try::End::kFail:
        return fail(where + ": " + t.why);
      case Try::End::kUnsupported: {
        Result r = fail(where + ": " + t.why);
        r.unsupported = true;
        return r;
      }
      case Try::End::kDone: {
        Result r;
        if (auto why = series.take(r.series); !why.empty())
          return fail(where + ": " + why);
        r.ok = true;
        return r;
      }
    }
  }
  if (last.empty())
    return fail(where + ": no reply within the deadline of " +
                number_text(limits_.total_s) + " s");
  return fail(last + " (" + std::to_string(tries) + " tries)");
}

}  // namespace gd::http::prom
