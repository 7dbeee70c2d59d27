#include "api/history_json.h"

#include <charconv>
#include <cmath>
#include <stdexcept>

#include "api/json_read.h"
#include "trace/json_out.h"

namespace gd::api {
namespace {

using nlohmann::json;
namespace jo = json_out;

constexpr size_t kMaxMetrics = 64;
constexpr size_t kMaxMetricBytes = 256;
constexpr size_t kMaxSeries = 4096;
// serve answers at most 11,000 points per series and 32 metrics.
constexpr size_t kMaxPoints = 1000000;

// Shortest round-trip text, without json_out::number's ".0" on whole
// values: timestamps and byte counts are whole, and a history reply is
// mostly points, so this keeps it as small as serve has always sent it.
// Not finite: null.
void compact_number(std::string& out, double v) {
  if (!std::isfinite(v)) {
    jo::null(out);
    return;
  }
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, ec == std::errc() ? end : buf);
}

double point_value(const json& v) {
  if (v.is_null()) return NAN;  // written for a value that was not finite
  if (!v.is_number())
    throw std::runtime_error("history: a point is not [t, value]");
  return v.get<double>();
}

HistoryResult result_from(const json& j, size_t& series_left,
                          size_t& points_left) {
  HistoryResult r;
  r.metric = text_or_empty(j, "metric", kMaxMetricBytes, "history");
  auto series = j.find("series");
  if (series == j.end() || !series->is_array())
    throw std::runtime_error("history: no 'series' array");
  for (const auto& s : *series) {
    if (!s.is_object())
      throw std::runtime_error("history: a series is not an object");
    if (series_left-- == 0)
      throw std::runtime_error("history: more than 4096 series");
    HistorySeries hs;
    if (auto g = optional_integer(s, "gpu", 0, kMaxGpu, "history"))
      hs.gpu = static_cast<int>(*g);
    if (auto p = optional_integer(s, "pid", 0, kMaxPid, "history"))
      hs.pid = static_cast<int>(*p);
    auto points = s.find("points");
    if (points == s.end() || !points->is_array())
      throw std::runtime_error("history: a series has no 'points' array");
    if (points->size() > points_left)
      throw std::runtime_error("history: more than 1000000 points");
    points_left -= points->size();
    hs.points.reserve(points->size());
    for (const auto& p : *points) {
      if (!p.is_array() || p.size() != 2 || !p[0].is_number())
        throw std::runtime_error("history: a point is not [t, value]");
      hs.points.emplace_back(p[0].get<double>(), point_value(p[1]));
    }
    r.series.push_back(std::move(hs));
  }
  return r;
}

}  // namespace

HistoryJsonWriter::HistoryJsonWriter(std::string& out, double since,
                                     double until, double step,
                                     uint64_t skipped_blocks, bool multi,
                                     std::optional<double> kept_in_memory_s)
    : out_(out), multi_(multi) {
  jo::lit(out_, "{\"since\":");
  compact_number(out_, since);
  jo::lit(out_, ",\"until\":");
  compact_number(out_, until);
  jo::lit(out_, ",\"step\":");
  compact_number(out_, step);
  jo::lit(out_, ",\"skipped_blocks\":");
  jo::unsigned_integer(out_, skipped_blocks);
  if (kept_in_memory_s) {
    jo::lit(out_, ",\"kept_in_memory_s\":");
    compact_number(out_, *kept_in_memory_s);
  }
  if (multi_) jo::lit(out_, ",\"results\":[");
}

void HistoryJsonWriter::close_series() {
  if (series_ > 0) jo::lit(out_, "]}");
}

void HistoryJsonWriter::metric(std::string_view name) {
  if (metrics_ > 0) {
    close_series();
    jo::lit(out_, "]}");
  }
  if (multi_) {
    if (metrics_ > 0) out_ += ',';
    out_ += '{';
  } else {
    out_ += ',';
  }
  jo::lit(out_, "\"metric\":");
  jo::string(out_, name);
  jo::lit(out_, ",\"series\":[");
  ++metrics_;
  series_ = 0;
}

void HistoryJsonWriter::series(std::optional<int> gpu, std::optional<int> pid) {
  close_series();
  if (series_ > 0) out_ += ',';
  jo::lit(out_, "{\"gpu\":");
  jo::value(out_, gpu);
  jo::lit(out_, ",\"pid\":");
  jo::value(out_, pid);
  jo::lit(out_, ",\"points\":[");
  ++series_;
  points_ = 0;
}

void HistoryJsonWriter::point(double t, double v) {
  if (points_++ > 0) out_ += ',';
  out_ += '[';
  compact_number(out_, t);
  out_ += ',';
  compact_number(out_, v);
  out_ += ']';
}

void HistoryJsonWriter::finish() {
  if (metrics_ > 0) {
    close_series();
    out_ += ']';
    if (multi_) out_ += '}';
  }
  if (multi_) out_ += ']';
  out_ += '}';
}

std::string history_json(const HistoryReply& r) {
  std::string out;
  HistoryJsonWriter w(out, r.since, r.until, r.step, r.skipped_blocks, r.multi);
  for (const auto& result : r.results) {
    w.metric(result.metric);
    for (const auto& s : result.series) {
      w.series(s.gpu, s.pid);
      for (const auto& [t, v] : s.points) w.point(t, v);
    }
  }
  w.finish();
  return out;
}

HistoryReply parse_history_json(std::string_view body) {
  json j = parse_object(body, "history");
  HistoryReply r;
  r.since = number_or(j, "since", 0, "history");
  r.until = number_or(j, "until", 0, "history");
  r.step = number_or(j, "step", 0, "history");
  r.skipped_blocks = static_cast<uint64_t>(
      optional_integer(j, "skipped_blocks", 0, INT64_MAX, "history")
          .value_or(0));
  size_t series_left = kMaxSeries, points_left = kMaxPoints;
  auto results = j.find("results");
  if (results != j.end()) {
    if (!results->is_array())
      throw std::runtime_error("history: 'results' is not an array");
    if (results->size() > kMaxMetrics)
      throw std::runtime_error("history: more than 64 metrics");
    r.multi = true;
    for (const auto& item : *results) {
      if (!item.is_object())
        throw std::runtime_error("history: a result is not an object");
      r.results.push_back(result_from(item, series_left, points_left));
    }
    return r;
  }
  r.results.push_back(result_from(j, series_left, points_left));
  return r;
}

}  // namespace gd::api
