// Points in time on the command line (export, report): a duration before
// now ("1h", "2d"), Unix seconds (a plain number), or a UTC date/time
// ("2024-11-22T08:00:00Z", "2024-11-22 08:00", "2024-11-22").
#pragma once

#include <string>

namespace gd {

// Throws std::invalid_argument naming the text.
double parse_time_point(const std::string& text, double now);

// "" when `text` is a valid time point, else why not (a CLI11 check).
std::string check_time_point(const std::string& text);

// "2024-11-22T08:00:00Z".
std::string utc_text(double t);

}  // namespace gd
