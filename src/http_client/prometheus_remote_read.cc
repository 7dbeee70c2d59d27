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
#include "http_client/remote_read_series.h"

namespace gd::http::prom {
namespace {

constexpr std::string_view kStreamedType =
    "application/x-streamed-protobuf; proto=prometheus.ChunkedReadResponse";
// Prometheus writes frames of at most 1 MiB
// (--storage.remote.read-max-bytes-in-frame); a frame is one series' chunks
// at least, so allow more.
constexpr size_t kMaxFrameBytes = 16 << 20;
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

// What one try got.
struct Try {
  enum class End { kDone, kRetry, kFail, kUnsupported } end = End::kFail;
  std::string why;
};

Try one_try(const Url& url, const Credentials& who, const Limits& limits,
            const std::string& body, double total_s, RemoteReadSeries& series,
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
  if (!r.ok) return {r.final ? Try::End::kFail : Try::End::kRetry, r.error};
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
    RemoteReadSeries series(grid, limits_);
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
