#include "tracegen/duration.h"

#include <charconv>
#include <stdexcept>
#include <string>

namespace gd::tracegen {

double parse_duration(std::string_view text) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  std::string_view unit(end, static_cast<size_t>(text.data() + text.size() - end));
  double scale = 0;
  if (unit.empty() || unit == "s") scale = 1;
  else if (unit == "ms") scale = 1e-3;
  else if (unit == "m" || unit == "min") scale = 60;
  else if (unit == "h") scale = 3600;
  else if (unit == "d") scale = 86400;
  if (ec != std::errc() || scale == 0 || !(value > 0))
    throw std::invalid_argument("bad duration '" + std::string(text) +
                                "' (use e.g. 600, 90s, 500ms, 10m, 24h, 2d)");
  return value * scale;
}

}  // namespace gd::tracegen
