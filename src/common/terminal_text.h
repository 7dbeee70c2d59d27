// The one sanitiser for untrusted text shown on a terminal: process names,
// command lines, user names, cgroup paths, kernel lines, anything read from
// a trace. JSON and Prometheus output keep their own escaping.
//
// What comes out is valid UTF-8 with nothing a terminal acts on:
//   - C0 controls and DEL become visible escapes: "\n", "\r", "\t", "\e"
//     (ESC), any other as "\xHH" (e.g. "\x07", "\x7f"), so one name stays
//     one row and no escape sequence can start;
//   - C1 controls (U+0080-U+009F, whether well-formed UTF-8 or the bare
//     byte 0x9b a terminal may read as CSI) become "\u009b" / "\x9b";
//   - bytes that are not valid UTF-8 (stray continuation bytes, overlong
//     forms, surrogates, above U+10FFFF, truncated sequences) become "\xHH",
//     one per byte;
//   - bidi and line-separator format characters (U+061C, U+200E, U+200F,
//     U+2028, U+2029, U+202A-U+202E, U+2066-U+2069) become "\u202e" style
//     escapes, so no name can reorder the rest of its row (Trojan Source);
//   - text longer than the cap is cut at a character boundary and ends in
//     "…" (U+2026).
// A backslash is kept as is: an escape in the output may therefore also be
// literal text of the input, which is harmless (it is printable either way).
// terminal_safe is idempotent on text shorter than its cap.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace gd {

// Longest untrusted string a text view prints, in bytes.
inline constexpr size_t kTerminalTextMax = 4096;
// Longest sentence of ours that embeds several untrusted strings (evidence,
// explanations, advice), in bytes.
inline constexpr size_t kTerminalSentenceMax = 4 * kTerminalTextMax;

// Marks text cut by terminal_safe.
inline constexpr std::string_view kTerminalCutMarker = "…";

// Returns `text` safe to write to a terminal: no C0/C1 control bytes, no
// escape sequences, invalid UTF-8 made visible, at most `max_bytes` bytes
// (ending in kTerminalCutMarker when cut).
std::string terminal_safe(std::string_view text,
                          size_t max_bytes = kTerminalTextMax);

// Columns `safe` takes on a terminal (wide East Asian characters and
// emoji 2, combining marks 0, others 1). `safe` must be terminal_safe output.
size_t terminal_width(std::string_view safe);

// terminal_safe(text), then cut to at most `columns` display columns,
// ending in "~" when cut (the table views' marker).
std::string terminal_fit(std::string_view text, size_t columns);

// terminal_fit(text, columns) padded with spaces to exactly `columns`
// display columns, for a table cell that is not the last of its row (fmt's
// own padding counts combining marks as one column each).
std::string terminal_cell(std::string_view text, size_t columns);

}  // namespace gd
