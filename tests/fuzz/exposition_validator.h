// A small validator of the Prometheus text exposition format 0.0.4, for the
// renderer's harness: each line is a "# HELP name text", a "# TYPE name
// type" or a sample "name{label="value",...} value"; names follow the
// format's grammar, label values use only the \\, \" and \n escapes, the
// value is a float, NaN, +Inf or -Inf, the page is valid UTF-8, every
// sample follows the TYPE of its family, and no series appears twice.
#pragma once

#include <string>
#include <string_view>

namespace gd::fuzz {

// "" when `page` is valid exposition text, else what is wrong and where.
std::string exposition_error(std::string_view page);

}  // namespace gd::fuzz
