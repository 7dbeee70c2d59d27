#include "http_client/prometheus_api.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <thread>

#include "http_client/prometheus_decode.h"
#include "http_client/prometheus_internal.h"

namespace gd::http::prom {
namespace {

struct Got {
  bool ok = false;
  std::string body_or_error;
};

// One API request, tried again after a failed request or a 5xx reply (a
// restarting or overloaded server) while tries and the deadline allow. A
// 4xx reply is the query's fault: the same question gets the same answer.
Got fetch(const Url& url, const Credentials& who, const Limits& limits,
          const std::string& path, const Fields& query,
          Clock::time_point deadline, RequestCancel& cancel) {
  const std::string where = url.text + path;
  std::string last;
  double backoff = limits.backoff_s;
  int tries = 0;
  for (; tries < std::max(1, limits.tries); ++tries) {
    if (tries > 0) {
      if (seconds_left(deadline) <= backoff) break;
      if (!pause(backoff, cancel)) return {false, where + ": stopped"};
      backoff *= 2;
    }
    const double left = seconds_left(deadline);
    if (left <= 0) break;
    Request req;
    req.path = path;
    req.query = query;
    req.total_s = std::min(limits.request_s, left);
    req.max_body_bytes = limits.max_body_bytes;
    Reply r = send(url, who, req, cancel);
    if (cancel.cancelled()) return {false, where + ": stopped"};
    if (!r.ok) {
      if (r.final) return {false, r.error};
      last = r.error;
      continue;
    }
    if (r.status == 200) return {true, std::move(r.body)};
    const std::string why = error_of(r.body, limits);
    last = where + ": HTTP " + std::to_string(r.status) +
           (why.empty() ? "" : ": " + why);
    if (r.status < 500) return {false, last};
  }
  if (last.empty())
    return {false, where + ": no reply within the deadline of " +
                       number_text(limits.total_s) + " s"};
  return {false, last + " (" + std::to_string(tries) + " tries)"};
}

// The series of one chunk joined to those of the chunks before it.
class Joined {
 public:
  // Series over `max_series` in all are refused by the caller.
  void add(std::vector<Series>&& chunk) {
    for (Series& s : chunk) {
      points_ += s.points.size();
      auto [it, fresh] = index_.try_emplace(key_of(s.labels), out_.size());
      if (fresh) {
        out_.push_back(std::move(s));
        continue;
      }
      auto& points = out_[it->second].points;
      for (const Point& p : s.points)
        if (points.empty() || p.t > points.back().t) points.push_back(p);
    }
  }
  size_t series() const { return out_.size(); }
  size_t points() const { return points_; }
  std::vector<Series> take() { return std::move(out_); }

 private:
  std::map<std::string, size_t> index_;
  std::vector<Series> out_;
  size_t points_ = 0;
};

}  // namespace

const std::string& Series::label(const std::string& name) const {
  static const std::string kNone;
  for (const auto& [n, v] : labels)
    if (n == name) return v;
  return kNone;
}

std::vector<Range> split_range(double start, double end, double step_s,
                               size_t points) {
  std::vector<Range> out;
  if (!(step_s > 0) || !(end >= start) || points == 0) return out;
  // A tiny slack so an end on the grid is not lost to rounding.
  const auto total =
      static_cast<size_t>(std::floor((end - start) / step_s + 1e-9)) + 1;
  for (size_t first = 0; first < total; first += points) {
    const size_t last = std::min(total, first + points) - 1;
    out.push_back({start + static_cast<double>(first) * step_s,
                   start + static_cast<double>(last) * step_s});
  }
  return out;
}

Client::Client(Url url, Credentials who, Limits limits)
    : url_(std::move(url)), who_(std::move(who)), limits_(limits) {}

Client Client::with_deadline(double total_s) const {
  Limits l = limits_;
  l.total_s = std::min(l.total_s, total_s);
  l.request_s = std::min(l.request_s, total_s);
  return Client(url_, who_, l);
}

Client Client::with_max_points(size_t max_points) const {
  Limits l = limits_;
  l.max_points = max_points;
  return Client(url_, who_, l);
}

Result Client::query_range(const std::string& expr, double start, double end,
                           double step_s, RequestCancel& cancel) const {
  if (!(step_s > 0) || !std::isfinite(start) || !std::isfinite(end) ||
      end < start)
    return fail("query_range: the range or step is not valid");
  const double per_series = (end - start) / step_s + 1;
  if (per_series > static_cast<double>(limits_.max_points))
    return fail("query_range: " + number_text(per_series) +
                " points per series are more than " +
                std::to_string(limits_.max_points) +
                "; ask for a shorter range or a longer step");
  const auto deadline = after(limits_.total_s);
  Joined joined;
  for (const Range& r :
       split_range(start, end, step_s, limits_.points_per_query)) {
    Got got = fetch(url_, who_, limits_, "/api/v1/query_range",
                    {{"query", expr},
                     {"start", number_text(r.start)},
                     {"end", number_text(r.end)},
                     {"step", number_text(step_s)}},
                    deadline, cancel);
    if (!got.ok) return fail(std::move(got.body_or_error));
    std::vector<Series> chunk;
    const Budget budget{limits_.max_series,
                        limits_.max_points - joined.points()};
    if (auto why = decode_matrix(got.body_or_error, limits_, budget, chunk);
        !why.empty())
      return fail(url_.text + "/api/v1/query_range: " + why);
    joined.add(std::move(chunk));
    if (joined.series() > limits_.max_series)
      return fail(url_.text + "/api/v1/query_range: more than " +
                  std::to_string(limits_.max_series) +
                  " series; narrow the query");
  }
  Result out;
  out.ok = true;
  out.series = joined.take();
  return out;
}

Result Client::series(const std::string& match, double start, double end,
                      RequestCancel& cancel) const {
  const auto deadline = after(limits_.total_s);
  Got got = fetch(url_, who_, limits_, "/api/v1/series",
                  {{"match[]", match},
                   {"start", number_text(start)},
                   {"end", number_text(end)}},
                  deadline, cancel);
  if (!got.ok) return fail(std::move(got.body_or_error));
  Result out;
  const Budget budget{limits_.max_series, 0};
  if (auto why = decode_series(got.body_or_error, limits_, budget, out.series);
      !why.empty())
    return fail(url_.text + "/api/v1/series: " + why);
  out.ok = true;
  return out;
}

}  // namespace gd::http::prom
