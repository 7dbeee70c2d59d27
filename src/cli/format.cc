#include "cli/format.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <stdexcept>

#include "common/terminal_text.h"

namespace gd {

std::string human_bytes(uint64_t bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 5) {
    v /= 1024.0;
    ++u;
  }
  if (u == 0) return fmt::format("{} B", bytes);
  return fmt::format("{:.1f} {}", v, units[u]);
}

std::string human_elapsed(double seconds) {
  if (!(seconds >= 0)) return kUnknown;
  auto s = static_cast<uint64_t>(seconds);
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  if (s < 86400) return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
  return fmt::format("{}d{:02}h", s / 86400, (s % 86400) / 3600);
}

double parse_duration(std::string_view text) {
  double value = 0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || !(value >= 0) || std::isinf(value))
    throw std::invalid_argument(
        fmt::format("invalid duration '{}': expected e.g. 500ms, 1s, 10m, 24h",
                    text));
  std::string_view unit(ptr, static_cast<size_t>(end - ptr));
  double mult;
  if (unit.empty() || unit == "s") mult = 1;
  else if (unit == "ms") mult = 0.001;
  else if (unit == "m" || unit == "min") mult = 60;
  else if (unit == "h") mult = 3600;
  else if (unit == "d") mult = 86400;
  else
    throw std::invalid_argument(fmt::format(
        "invalid duration '{}': unknown unit '{}' (use ms, s, m, h, d)", text,
        unit));
  return value * mult;
}

std::string ellipsize(std::string_view text, size_t width) {
  return terminal_fit(text, width);
}

}  // namespace gd
