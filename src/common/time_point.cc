#include "common/time_point.h"

#include <cmath>
#include <cstdlib>
#include <ctime>
#include <optional>
#include <stdexcept>

#include "common/duration.h"

namespace gd {
namespace {

// A plain number ("0", "1732262400", "1732262400.5"): Unix seconds, as
// /api/v1/history reads it, so `--since 0` is the epoch (everything).
std::optional<double> parse_unix_seconds(const std::string& text) {
  if (text.empty() ||
      text.find_first_not_of("0123456789.") != std::string::npos)
    return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(v))
    return std::nullopt;
  return v;
}

// "2024-11-22T08:00:00Z", "2024-11-22T08:00", "2024-11-22 08:00:00" (UTC).
std::optional<double> parse_utc_time(const std::string& text) {
  std::tm tm{};
  for (const char* fmt : {"%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S",
                          "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M", "%Y-%m-%d"}) {
    tm = std::tm{};
    const char* end = strptime(text.c_str(), fmt, &tm);
    if (end && (*end == '\0' || (end[0] == 'Z' && end[1] == '\0')))
      return static_cast<double>(timegm(&tm));
  }
  return std::nullopt;
}

}  // namespace

double parse_time_point(const std::string& text, double now) {
  if (auto t = parse_utc_time(text)) return *t;
  if (auto t = parse_unix_seconds(text)) return *t;
  double v = 0;
  try {
    v = parse_duration(text);
  } catch (const std::exception&) {
    throw std::invalid_argument(
        "'" + text +
        "' is not a duration (1h), a Unix time or a UTC time "
        "(2024-11-22T08:00:00Z)");
  }
  return now - v;
}

std::string check_time_point(const std::string& text) {
  try {
    parse_time_point(text, 0);
    return {};
  } catch (const std::exception& e) {
    return e.what();
  }
}

TimeSpan parse_time_span(const std::string& since, const std::string& until,
                         double now, double default_span_s) {
  TimeSpan w;
  w.end = until.empty() ? now : parse_time_point(until, now);
  w.start =
      since.empty() ? w.end - default_span_s : parse_time_point(since, w.end);
  if (w.end < w.start)
    throw std::invalid_argument(utc_text(w.end) + " is before the start " +
                                utc_text(w.start));
  return w;
}

namespace {

// `t` (Unix seconds) in UTC, or local time, as strftime's `format` writes it.
std::string time_format(double t, const char* format, bool local) {
  std::time_t secs = static_cast<std::time_t>(std::floor(t));
  std::tm tm{};
  if (local)
    localtime_r(&secs, &tm);
  else
    gmtime_r(&secs, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

}  // namespace

std::string utc_text(double t) {
  return time_format(t, "%Y-%m-%dT%H:%M:%SZ", false);
}

std::string local_text(double t) {
  if (!(t >= 0) || !(t < 253402300800.0)) return "";
  return time_format(t, "%Y-%m-%d %H:%M:%S %Z", true);
}

std::string local_hms(double t) {
  if (!(t > 0) || !(t < 253402300800.0)) return "";
  return time_format(t, "%H:%M:%S", true);
}

std::string utc_hms(double t) {
  // Past the year 9999 is no time a log stamps (and would not fit time_t's
  // conversion on every platform).
  if (!(t > 0) || !(t < 253402300800.0)) return "";
  return time_format(t, "%H:%M:%S", false);
}

}  // namespace gd
