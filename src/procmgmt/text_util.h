// Text helpers of the process-management views (kept here rather than in
// the CLI so the library renders on its own).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace gd::procmgmt {

// "30.0 GiB", "400 MiB", "512 KiB", "0 B" (same style as `gpudoctor status`).
inline std::string bytes_text(uint64_t b) {
  constexpr double kKiB = 1024.0, kMiB = kKiB * 1024, kGiB = kMiB * 1024,
                   kTiB = kGiB * 1024;
  double v = static_cast<double>(b);
  if (v >= kTiB) return fmt::format("{:.1f} TiB", v / kTiB);
  if (v >= kGiB) return fmt::format("{:.1f} GiB", v / kGiB);
  if (v >= kMiB) return fmt::format("{:.0f} MiB", v / kMiB);
  if (v >= kKiB) return fmt::format("{:.0f} KiB", v / kKiB);
  return fmt::format("{} B", b);
}

inline std::string shorten(std::string_view s, size_t width) {
  if (s.size() <= width) return std::string(s);
  return std::string(s.substr(0, width - 1)) + "~";
}

}  // namespace gd::procmgmt
