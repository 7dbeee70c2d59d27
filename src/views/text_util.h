// Text helpers of the process-management views (kept here rather than in
// the CLI so the library renders on its own).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "common/terminal_text.h"

namespace gd::procmgmt {

// Made terminal-safe (untrusted text: names, command lines) and shortened to
// at most `width` display columns, ending in "~" when cut.
inline std::string shorten(std::string_view s, size_t width) {
  return terminal_fit(s, width);
}

// Text that embeds untrusted strings (explanations, advice, notes) made
// terminal-safe as a whole; our own words have no control characters.
inline std::string safe_text(std::string_view s) {
  return terminal_safe(s, kTerminalSentenceMax);
}

}  // namespace gd::procmgmt
