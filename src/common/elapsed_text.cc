#include "common/elapsed_text.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>

namespace gd {

namespace {
constexpr long long kMinute = 60, kHour = 3600, kDay = 86400;
}  // namespace

std::string elapsed_compact(double seconds) {
  if (!(seconds >= 0)) return "n/a";
  auto s = static_cast<uint64_t>(seconds);
  if (s < kMinute) return fmt::format("{}s", s);
  if (s < kHour) return fmt::format("{}m{:02}s", s / kMinute, s % kMinute);
  if (s < kDay)
    return fmt::format("{}h{:02}m", s / kHour, (s % kHour) / kMinute);
  return fmt::format("{}d{:02}h", s / kDay, (s % kDay) / kHour);
}

std::string elapsed_words(double seconds) {
  if (!(seconds >= 0)) seconds = 0;
  auto s = static_cast<long long>(std::llround(seconds));
  if (s < 2 * kMinute) return fmt::format("{} s", s);
  long long m = (s + kMinute / 2) / kMinute;
  if (m < 2 * kMinute) return fmt::format("{} min", m);
  long long h = m / kMinute;
  if (h < 48) return fmt::format("{} h {:02} min", h, m % kMinute);
  return fmt::format("{} d {:02} h", h / 24, h % 24);
}

std::string elapsed_decimal(double s) {
  if (s < 2 * kMinute) return fmt::format("{:.0f}s", s);
  if (s < 2 * kHour) return fmt::format("{:.0f}m", s / kMinute);
  if (s < 2 * kDay) return fmt::format("{:.1f}h", s / kHour);
  return fmt::format("{:.1f}d", s / kDay);
}

}  // namespace gd
