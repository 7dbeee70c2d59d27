// Points in time on the command line (export, report): a duration before
// now ("1h", "2d"), Unix seconds (a plain number), or a UTC date/time
// ("2024-11-22T08:00:00Z", "2024-11-22 08:00", "2024-11-22").
#pragma once

#include <string>

namespace gd {

// Throws std::invalid_argument naming the text.
double parse_time_point(const std::string& text, double now);

// "" when `text` is a valid time point, else why not (a CLI11 check).
std::string check_time_point(const std::string& text);

// "2024-11-22T08:00:00Z": RFC 3339, for JSON, files and logs.
std::string utc_text(double t);

// "2024-11-22 09:00:00 CET": local time with its zone, for terminal views
// (status, top, report, export). "" when `t` is not a time.
std::string local_text(double t);

// "09:00:00": local time of day, for a live clock (top); "" when `t` is not
// a time.
std::string local_hms(double t);

// "08:00:00" (UTC), the short time a drain reason carries; "" when `t` is
// not a time (0, negative, NaN).
std::string utc_hms(double t);

struct TimeSpan {
  double start = 0, end = 0;
};
// --since and --until as the user gave them ("" when absent). The end is
// --until (default now); the start is --since (default `default_span_s`
// before the end). A duration in --since counts back from --until when one
// is given, so `--since 1h --until 2024-11-22T08:00:00Z` is the hour before
// 08:00, not the last hour. Throws std::invalid_argument naming the text, or
// when the end is before the start.
TimeSpan parse_time_span(const std::string& since, const std::string& until,
                         double now, double default_span_s);

}  // namespace gd
