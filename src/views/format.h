// Small text helpers for the CLI views: cells and unknown values (sizes and
// lengths of time come from common/).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/bytes_text.h"
#include "common/elapsed_text.h"

namespace gd {

// Made terminal-safe (untrusted text: names, command lines) and shortened to
// at most `width` display columns, ending in "~" when cut.
std::string ellipsize(std::string_view text, size_t width);

// "n/a" stands for unknown everywhere in the views (never 0).
inline constexpr const char* kUnknown = "n/a";

}  // namespace gd
