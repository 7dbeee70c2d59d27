// Small text helpers for the CLI views: sizes, durations, unknown values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gd {

// "66.0 GiB", "512 MiB", "0 B".
std::string human_bytes(uint64_t bytes);
// "2h03m", "4m12s", "37s", "3d04h".
std::string human_elapsed(double seconds);
// Made terminal-safe (untrusted text: names, command lines) and shortened to
// at most `width` display columns, ending in "~" when cut.
std::string ellipsize(std::string_view text, size_t width);

// "n/a" stands for unknown everywhere in the views (never 0).
inline constexpr const char* kUnknown = "n/a";

}  // namespace gd
