// What every view shares: the word for an unknown value, and the common
// formatters of sizes and lengths of time (src/common).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/bytes_text.h"
#include "common/elapsed_text.h"

namespace gd {

// "n/a" stands for unknown everywhere in the views (never 0).
inline constexpr const char* kUnknown = "n/a";

}  // namespace gd
