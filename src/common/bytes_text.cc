#include "common/bytes_text.h"

#include <fmt/format.h>

namespace gd {

namespace {

constexpr const char* kByteUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
constexpr int kLargestUnit = 5;
constexpr int kGiB = 3;

// `bytes` in the largest unit it fills (or in `fixed_unit` when >= 0), with
// one decimal from `tenths_from` up and whole numbers below it.
std::string format_bytes(uint64_t bytes, int tenths_from, int fixed_unit) {
  double v = static_cast<double>(bytes);
  int unit = 0;
  while (fixed_unit < 0 ? (v >= 1024.0 && unit < kLargestUnit)
                        : unit < fixed_unit) {
    v /= 1024.0;
    ++unit;
  }
  if (unit == 0) return fmt::format("{} B", bytes);
  if (unit < tenths_from) return fmt::format("{:.0f} {}", v, kByteUnits[unit]);
  return fmt::format("{:.1f} {}", v, kByteUnits[unit]);
}

}  // namespace

std::string human_bytes(uint64_t bytes) { return format_bytes(bytes, 1, -1); }

std::string human_bytes_brief(uint64_t bytes) {
  return format_bytes(bytes, kGiB, -1);
}

std::string gib_text(uint64_t bytes) { return format_bytes(bytes, kGiB, kGiB); }

}  // namespace gd
