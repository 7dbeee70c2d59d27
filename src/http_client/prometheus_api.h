// A client of the Prometheus HTTP API (/api/v1/query_range, /api/v1/series)
// and of its remote-read API (/api/v1/read) on top of the one HTTP client
// (client.h): what `export --prometheus` reads a fleet's history from.
//
// The server is untrusted: every reply is bounded (bytes, series, points,
// labels per series, bytes per label), its error JSON becomes one line, a
// long range is asked for in chunks (Prometheus refuses a query of more
// than 11,000 points per series), a 5xx reply or a failed request is tried
// again a few times with a growing pause, and the whole call ends by one
// deadline.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "http_client/cancel.h"
#include "http_client/client.h"
#include "http_client/url.h"

namespace gd::http::prom {

// Prometheus refuses a range query of more points per series than this.
inline constexpr size_t kMaxPointsPerQuery = 11000;

struct Limits {
  size_t max_series = 4096;          // per call (all chunks)
  size_t max_points = 8'000'000;     // per call, all series together
  size_t max_labels = 64;            // per series
  size_t max_label_bytes = 256;      // a name or value is cut to this
  size_t max_body_bytes = 64 << 20;  // per reply
  size_t points_per_query = kMaxPointsPerQuery;
  int tries = 3;           // per request, the first one included
  double backoff_s = 0.5;  // before the 2nd try; doubled before each next
  double request_s = 30;   // one request's deadline
  double total_s = 120;    // the whole call's deadline
};

using Labels = std::vector<std::pair<std::string, std::string>>;

struct Point {
  double t = 0;  // Unix seconds
  double v = 0;  // NaN and infinities as the server wrote them
};

struct Series {
  Labels labels;              // sorted by name
  std::vector<Point> points;  // by time, no time twice
  // The value of label `name`, "" when absent.
  const std::string& label(const std::string& name) const;
};

struct Result {
  bool ok = false;
  std::string error;  // one line when !ok
  // read_grid: the server does not answer remote read (a 4xx reply, or a
  // reply of another kind): ask by query_range instead.
  bool unsupported = false;
  std::vector<Series> series;
};

// One label matcher of a remote-read selector (PromQL's =, !=, =~, !~).
struct Matcher {
  enum class Op { kEq, kNeq, kRe, kNre };
  Op op = Op::kEq;
  std::string name, value;  // value: the regular expression itself for kRe
};
using Selector = std::vector<Matcher>;

struct Range {
  double start = 0, end = 0;
};

// [start, end] at `step_s` as ranges of at most `points` evaluation times
// each, end to end: the grid start + i * step_s, none asked twice.
std::vector<Range> split_range(double start, double end, double step_s,
                               size_t points);

class Client {
 public:
  Client(Url url, Credentials who, Limits limits = {});

  // `expr` evaluated every `step_s` seconds from `start` to `end` (Unix
  // seconds), as series of points, the chunks' pieces joined.
  Result query_range(const std::string& expr, double start, double end,
                     double step_s, RequestCancel& cancel) const;
  // The series matching any of `selectors`, read raw through remote read
  // (POST /api/v1/read, streamed XOR chunks, or the older snappy samples)
  // and put on the grid start + i * step_s as query_range would give them
  // (instant_grid.h): one request for all selectors instead of one range
  // query per metric, and no evaluation on the server. `unsupported` when
  // the server does not answer remote read (VictoriaMetrics does not).
  Result read_grid(const std::vector<Selector>& selectors, double start,
                   double end, double step_s, RequestCancel& cancel) const;
  // The label sets of the series matching `match` in [start, end] (no
  // points).
  Result series(const std::string& match, double start, double end,
                RequestCancel& cancel) const;

  const Limits& limits() const { return limits_; }
  // The same client whose calls end within `total_s` (and each request
  // within it): what is left of a caller's own deadline.
  Client with_deadline(double total_s) const;
  // The same client allowing `max_points` points a call (a range over a
  // fleet: a series per GPU, each of several points).
  Client with_max_points(size_t max_points) const;

 private:
  Url url_;
  Credentials who_;
  Limits limits_;
};

}  // namespace gd::http::prom
