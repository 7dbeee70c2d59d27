// "600", "90s", "500ms", "10m", "24h", "2d" -> seconds.
#pragma once

#include <string_view>

namespace gd::tracegen {

// Throws std::invalid_argument for anything else (or a value <= 0).
double parse_duration(std::string_view text);

}  // namespace gd::tracegen
