// The one sanitiser for untrusted text shown on a terminal: process names,
// command lines, user names, cgroup paths, kernel lines, anything read from
// a trace. JSON and Prometheus output keep their own escaping.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace gd {

// Longest untrusted string a text view prints, in bytes.
inline constexpr size_t kTerminalTextMax = 4096;

// Returns `text` safe to write to a terminal: no C0/C1 control bytes, no
// escape sequences, invalid UTF-8 made visible, at most `max_bytes` bytes.
std::string terminal_safe(std::string_view text,
                          size_t max_bytes = kTerminalTextMax);

}  // namespace gd
