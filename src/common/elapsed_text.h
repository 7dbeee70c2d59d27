// Lengths of time, for people. Three styles, each what its readers see
// today, in one place so new views pick one rather than write a fourth:
//   elapsed_compact  "37s", "4m12s", "2h03m", "3d04h" (truncated; "n/a" when
//                    negative or unknown): ps ELAPSED, kill timeouts
//   elapsed_words    "45 s", "10 min", "2 h 05 min", "3 d 04 h" (rounded;
//                    negative is 0): diagnose evidence
//   elapsed_decimal  "45s", "10m", "2.5h", "3.5d": watch-leak spans and
//                    time until a GPU is full, in an 8-column cell
// (Durations that users type, and their exact echo, are common/duration.h.)
#pragma once

#include <string>

namespace gd {

std::string elapsed_compact(double seconds);
std::string elapsed_words(double seconds);
std::string elapsed_decimal(double seconds);

}  // namespace gd
