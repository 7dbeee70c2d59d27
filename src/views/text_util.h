// Text helpers of the process-management views (kept here rather than in
// the CLI so the library renders on its own).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "common/terminal_text.h"

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

// Made terminal-safe (untrusted text: names, command lines) and shortened to
// at most `width` display columns, ending in "~" when cut.
inline std::string shorten(std::string_view s, size_t width) {
  return terminal_fit(s, width);
}

// Text that embeds untrusted strings (explanations, advice, notes) made
// terminal-safe as a whole; our own words have no control characters.
inline std::string safe_text(std::string_view s) {
  return terminal_safe(s, kTerminalSentenceMax);
}

}  // namespace gd::procmgmt
