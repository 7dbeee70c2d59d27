// The one duration parser of the command line, config files, the HTTP API
// and tracegen: "500ms", "1s", "10m" (or "10min"), "24h", "7d", "2w"; a
// plain number is seconds. Digits with an optional fraction only: no sign,
// exponent, hex, spaces, nan or inf, so "010" is ten seconds and "0x10" is
// an error rather than a surprise.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gd {

// Longest duration any input may name. Callers turn durations into
// std::chrono nanoseconds (int64: 292 years), so this keeps every
// conversion exact and free of overflow.
inline constexpr double kMaxDurationSeconds = 100.0 * 365 * 86400;

// Seconds, or nullopt with `error` (when given) saying why, e.g.
// "invalid duration '5x': unknown unit 'x' (use ms, s, m, h, d, w)".
std::optional<double> try_parse_duration(std::string_view text,
                                         std::string* error = nullptr);

// Same; throws std::invalid_argument with that message.
double parse_duration(std::string_view text);

// The values a flag or key accepts, both ends included.
struct DurationRange {
  double min_s = 0;
  double max_s = kMaxDurationSeconds;
};

// "" when `seconds` lies in `range`, else "'TEXT' is out of range 10ms..1h".
std::string check_duration_range(std::string_view text, double seconds,
                                 DurationRange range);

// parse_duration, then the range check; throws std::invalid_argument.
double parse_duration_in(std::string_view text, DurationRange range);

// "10ms", "1s", "90s", "5m", "1h", "30d", "2w": the shortest exact form in
// the units above (for messages and --help).
std::string duration_text(double seconds);

// "10ms..1h".
std::string duration_range_text(DurationRange range);

}  // namespace gd
