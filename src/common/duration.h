// The one duration parser of the command line, config files and the API.
#pragma once

#include <string_view>

namespace gd {

// Placeholder until the common parser lands.
double parse_duration_seconds(std::string_view text);

}  // namespace gd
