// /proc/loadavg: "0.52 0.58 0.59 2/345 12345" -> the 1-minute load.
#pragma once

#include <optional>
#include <string_view>

namespace gd::procfs {

std::optional<double> parse_loadavg1(std::string_view text);

}  // namespace gd::procfs
