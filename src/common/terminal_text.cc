#include "common/terminal_text.h"

#include <algorithm>
#include <cstdint>

namespace gd {

namespace {

constexpr char kHex[] = "0123456789abcdef";

// Length of the well-formed UTF-8 sequence at s[i] (RFC 3629: no overlong
// forms, no surrogates, nothing above U+10FFFF), or 0 when it is not one.
// Sets `cp` to the code point.
size_t utf8_sequence(std::string_view s, size_t i, uint32_t& cp) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  unsigned char c = b(0);
  size_t n;
  unsigned char lo = 0x80, hi = 0xbf;  // allowed range of the second byte
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
    cp = c & 0x1fu;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    cp = c & 0x0fu;
    if (c == 0xe0) lo = 0xa0;  // overlong
    if (c == 0xed) hi = 0x9f;  // surrogates
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    cp = c & 0x07u;
    if (c == 0xf0) lo = 0x90;  // overlong
    if (c == 0xf4) hi = 0x8f;  // above U+10FFFF
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    unsigned char d = b(k);
    if (k == 1 ? (d < lo || d > hi) : (d < 0x80 || d > 0xbf)) return 0;
    cp = (cp << 6) | (d & 0x3fu);
  }
  return n;
}

// Format characters that reorder or break a row: bidi embeddings,
// overrides, isolates and marks, and the Unicode line/paragraph separators.
bool is_layout_control(uint32_t cp) {
  return cp == 0x061c || cp == 0x200e || cp == 0x200f || cp == 0x2028 ||
         cp == 0x2029 || (cp >= 0x202a && cp <= 0x202e) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

void append_byte_escape(std::string& out, unsigned char c) {
  switch (c) {
    case '\n':
      out += "\\n";
      return;
    case '\r':
      out += "\\r";
      return;
    case '\t':
      out += "\\t";
      return;
    case 0x1b:
      out += "\\e";
      return;
    default:
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
  }
}

void append_code_point_escape(std::string& out, uint32_t cp) {
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(cp >> shift) & 0xf];
}

bool is_printable_ascii(unsigned char c) { return c >= 0x20 && c < 0x7f; }

// Decodes the (already safe, so well-formed) UTF-8 code point at s[i].
size_t next_code_point(std::string_view s, size_t i, uint32_t& cp) {
  auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) {
    cp = c;
    return 1;
  }
  size_t n = utf8_sequence(s, i, cp);
  if (n == 0) {  // not terminal_safe output; count the byte as one column
    cp = c;
    return 1;
  }
  return n;
}

// Display columns of one code point. The wide ranges are those fmt counts
// as two columns when it pads, so a cell padded here lines up with fmt's.
size_t code_point_width(uint32_t cp) {
  if ((cp >= 0x0300 && cp <= 0x036f) || (cp >= 0x200b && cp <= 0x200d) ||
      (cp >= 0xfe00 && cp <= 0xfe0f) || (cp >= 0x20d0 && cp <= 0x20ff))
    return 0;  // combining marks, zero-width spaces, variation selectors
  bool wide =
      cp >= 0x1100 &&
      (cp <= 0x115f || cp == 0x2329 || cp == 0x232a ||
       (cp >= 0x2e80 && cp <= 0xa4cf && cp != 0x303f) ||
       (cp >= 0xac00 && cp <= 0xd7a3) || (cp >= 0xf900 && cp <= 0xfaff) ||
       (cp >= 0xfe10 && cp <= 0xfe19) || (cp >= 0xfe30 && cp <= 0xfe6f) ||
       (cp >= 0xff00 && cp <= 0xff60) || (cp >= 0xffe0 && cp <= 0xffe6) ||
       (cp >= 0x20000 && cp <= 0x2fffd) || (cp >= 0x30000 && cp <= 0x3fffd) ||
       (cp >= 0x1f300 && cp <= 0x1f64f) || (cp >= 0x1f900 && cp <= 0x1f9ff));
  return wide ? 2 : 1;
}

}  // namespace

std::string terminal_safe(std::string_view text, size_t max_bytes) {
  std::string out;
  out.reserve(text.size() < max_bytes ? text.size() : max_bytes);
  // Where to cut if the text turns out too long: the last character
  // boundary that leaves room for the marker (a cap smaller than the marker
  // simply cuts).
  const size_t budget = max_bytes >= kTerminalCutMarker.size()
                            ? max_bytes - kTerminalCutMarker.size()
                            : max_bytes;
  size_t cut_at = 0;
  size_t i = 0;
  while (i < text.size() && out.size() <= max_bytes) {
    auto c = static_cast<unsigned char>(text[i]);
    size_t before = out.size();
    uint32_t cp = 0;
    if (is_printable_ascii(c)) {
      // Fast path: copy a run of printable ASCII in one go, never more than
      // one byte past the cap (a 1 MiB command line is not copied whole).
      size_t j = i + 1;
      size_t limit = std::min(text.size(), i + (max_bytes + 1 - before));
      while (j < limit &&
             is_printable_ascii(static_cast<unsigned char>(text[j])))
        ++j;
      out.append(text.substr(i, j - i));
      i = j;
      // An ASCII run may be cut anywhere.
      if (before <= budget) cut_at = std::min(out.size(), budget);
      continue;
    }
    if (c < 0x80) {
      append_byte_escape(out, c);
      i += 1;
    } else if (size_t n = utf8_sequence(text, i, cp); n == 0) {
      append_byte_escape(out, c);
      i += 1;
    } else {
      if (cp <= 0x9f || is_layout_control(cp))
        append_code_point_escape(out, cp);
      else
        out.append(text.substr(i, n));
      i += n;
    }
    // An escape or a multi-byte character is never split.
    if (out.size() <= budget) cut_at = out.size();
  }
  if (i == text.size() && out.size() <= max_bytes) return out;
  out.resize(cut_at);
  if (max_bytes >= kTerminalCutMarker.size()) out += kTerminalCutMarker;
  return out;
}

size_t terminal_width(std::string_view safe) {
  size_t width = 0;
  for (size_t i = 0; i < safe.size();) {
    uint32_t cp;
    i += next_code_point(safe, i, cp);
    width += code_point_width(cp);
  }
  return width;
}

std::string terminal_fit(std::string_view text, size_t columns) {
  std::string safe = terminal_safe(text);
  if (terminal_width(safe) <= columns) return safe;
  if (columns == 0) return {};
  // Keep whole characters up to columns - 1, then the "~" marker.
  size_t width = 0, end = 0;
  for (size_t i = 0; i < safe.size();) {
    uint32_t cp;
    size_t n = next_code_point(safe, i, cp);
    size_t w = code_point_width(cp);
    if (width + w > columns - 1) break;
    width += w;
    i += n;
    end = i;
  }
  safe.resize(end);
  safe += '~';
  return safe;
}

std::string terminal_cell(std::string_view text, size_t columns) {
  std::string cell = terminal_fit(text, columns);
  size_t width = terminal_width(cell);
  if (width < columns) cell.append(columns - width, ' ');
  return cell;
}

}  // namespace gd
