#include "views/format.h"

#include <fmt/format.h>

#include <cmath>

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

std::string ellipsize(std::string_view text, size_t width) {
  return terminal_fit(text, width);
}

}  // namespace gd
