// HTML for untrusted text (node names, label values, finding text): the
// escaping of an HTML report's elements and attributes, and JSON made safe
// to sit inside a <script> element.
#pragma once

#include <string>
#include <string_view>

namespace gd {

// `text` with & < > " ' as character references: safe as element content
// and as a double- or single-quoted attribute value. Nothing else changes.
std::string html_escape(std::string_view text);

// terminal_safe(text, max_bytes) (valid UTF-8, no control or bidi
// characters, capped), then html_escape: what a report shows of a string
// it was given.
std::string html_text(std::string_view text, size_t max_bytes = 4096);

// JSON text with < > & and U+2028/U+2029 written as \u escapes, so it
// cannot end the <script> element it is placed in ("</script>", "<!--").
// `json` must be valid JSON (the escapes are only valid inside strings,
// where alone those characters can occur).
std::string json_in_script(std::string_view json);

}  // namespace gd
