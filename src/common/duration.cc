#include "common/duration.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace gd {
namespace {

struct Unit {
  std::string_view name;
  double seconds;
};

// Longest first, so duration_text picks the largest exact unit; "min"
// before "m" and "ms" before "m" so the longer names match whole.
constexpr Unit kUnits[] = {{"w", 7 * 86400.0}, {"d", 86400.0}, {"h", 3600.0},
                           {"min", 60.0},      {"m", 60.0},    {"s", 1.0},
                           {"ms", 0.001}};

bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::string quoted(std::string_view text) {
  return "'" + std::string(text) + "'";
}

std::optional<double> fail(std::string* error, std::string_view text,
                           const std::string& why) {
  if (error) *error = "invalid duration " + quoted(text) + ": " + why;
  return std::nullopt;
}

}  // namespace

std::optional<double> try_parse_duration(std::string_view text,
                                         std::string* error) {
  if (text.empty()) return fail(error, text, "empty");
  // The grammar is checked here; from_chars then converts exactly what was
  // checked (it alone would also take exponents, "inf" and "nan").
  size_t i = 0;
  while (i < text.size() && is_digit(text[i])) ++i;
  size_t int_digits = i;
  if (i < text.size() && text[i] == '.') {
    size_t frac_start = ++i;
    while (i < text.size() && is_digit(text[i])) ++i;
    if (i == frac_start) return fail(error, text, "expected digits after '.'");
  }
  if (int_digits == 0)
    return fail(error, text,
                "expected a number of seconds or a number with a unit, "
                "e.g. 500ms, 1s, 10m, 24h, 7d");
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + i, value);
  if (ec != std::errc() || end != text.data() + i)
    return fail(error, text, "too long (at most 100 years)");
  std::string_view unit = text.substr(i);
  double scale = 0;
  if (unit.empty()) scale = 1;
  for (const Unit& u : kUnits)
    if (unit == u.name) scale = u.seconds;
  if (scale == 0)
    return fail(error, text,
                "unknown unit " + quoted(unit) + " (use ms, s, m, h, d, w)");
  double seconds = value * scale;
  if (!std::isfinite(seconds) || seconds > kMaxDurationSeconds)
    return fail(error, text, "too long (at most 100 years)");
  return seconds;
}

double parse_duration(std::string_view text) {
  std::string error;
  auto v = try_parse_duration(text, &error);
  if (!v) throw std::invalid_argument(error);
  return *v;
}

std::string check_duration_range(std::string_view text, double seconds,
                                 DurationRange range) {
  if (seconds >= range.min_s && seconds <= range.max_s) return {};
  return quoted(text) + " is out of range " + duration_range_text(range);
}

double parse_duration_in(std::string_view text, DurationRange range) {
  double v = parse_duration(text);
  std::string error = check_duration_range(text, v, range);
  if (!error.empty()) throw std::invalid_argument(error);
  return v;
}

std::string duration_text(double seconds) {
  for (const Unit& u : kUnits) {
    if (u.name == "min") continue;  // "1m" is the short form
    double n = seconds / u.seconds;
    if (n >= 1 && std::fabs(n - std::round(n)) < 1e-9) {
      char buf[48];
      std::snprintf(buf, sizeof buf, "%.0f%s", std::round(n),
                    std::string(u.name).c_str());
      return buf;
    }
  }
  char buf[48];
  std::snprintf(buf, sizeof buf, "%gs", seconds);
  return buf;
}

std::string duration_range_text(DurationRange range) {
  return duration_text(range.min_s) + ".." + duration_text(range.max_s);
}

}  // namespace gd
