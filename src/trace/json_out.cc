#include "trace/json_out.h"

#include <charconv>
#include <cmath>
#include <cstring>

namespace gd::json_out {
namespace {

constexpr char kReplacementChar[] = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

// Length of the well-formed UTF-8 sequence starting at p (lead byte >= 0x80),
// or 0 if it is ill-formed; then *bad is the length of the maximal ill-formed
// prefix (Unicode "maximal subpart"), which becomes one U+FFFD.
// Byte ranges from Unicode Table 3-7 (no overlongs, no surrogates, <=
// U+10FFFF).
size_t utf8_sequence(const unsigned char* p, const unsigned char* end,
                     size_t* bad) {
  const unsigned char c = p[0];
  size_t len;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    *bad = 1;
    return 0;
  }
  for (size_t i = 1; i < len; ++i) {
    const unsigned char min = i == 1 ? lo : 0x80;
    const unsigned char max = i == 1 ? hi : 0xBF;
    if (p + i >= end || p[i] < min || p[i] > max) {
      *bad = i;
      return 0;
    }
  }
  return len;
}

void escape_ascii(std::string& out, unsigned char c) {
  switch (c) {
    case '"':
      lit(out, "\\\"");
      return;
    case '\\':
      lit(out, "\\\\");
      return;
    case '\n':
      lit(out, "\\n");
      return;
    case '\r':
      lit(out, "\\r");
      return;
    case '\t':
      lit(out, "\\t");
      return;
    case '\b':
      lit(out, "\\b");
      return;
    case '\f':
      lit(out, "\\f");
      return;
    default: {
      static constexpr char kHex[] = "0123456789abcdef";
      char buf[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xF]};
      out.append(buf, sizeof buf);
    }
  }
}

// Whether any of the 8 bytes at p needs a look of its own: a control
// character, '"', '\\' or a byte of a multi-byte UTF-8 sequence. Most text
// (command lines, paths, names) has none: it is passed over a word at a
// time instead of a byte at a time (a third of writing a trace line).
bool word_needs_look(const unsigned char* p) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  constexpr uint64_t kHigh = 0x8080808080808080ULL;
  uint64_t w;
  std::memcpy(&w, p, sizeof w);
  const uint64_t quote = w ^ (kOnes * '"'), backslash = w ^ (kOnes * '\\');
  // A byte's high bit is set where it is >= 0x80, < 0x20 (given the byte is
  // < 0x80), '"' or '\\' (zero after the xor); exact for "any byte".
  const uint64_t looks = w | ((w - kOnes * 0x20) & ~w) |
                         ((quote - kOnes) & ~quote) |
                         ((backslash - kOnes) & ~backslash);
  return (looks & kHigh) != 0;
}

}  // namespace

void string(std::string& out, std::string_view s) {
  out.push_back('"');
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  const auto* run = p;  // start of bytes that can be copied as they are
  while (p < end) {
    if (end - p >= 8 && !word_needs_look(p)) {
      p += 8;
      continue;
    }
    const unsigned char c = *p;
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
      ++p;
      continue;
    }
    if (c >= 0x80) {
      size_t bad = 0;
      if (size_t n = utf8_sequence(p, end, &bad)) {
        p += n;
        continue;
      }
      out.append(reinterpret_cast<const char*>(run), p - run);
      lit(out, kReplacementChar);
      p += bad;
      run = p;
      continue;
    }
    out.append(reinterpret_cast<const char*>(run), p - run);
    escape_ascii(out, c);
    run = ++p;
  }
  out.append(reinterpret_cast<const char*>(run), p - run);
  out.push_back('"');
}

void integer(std::string& out, int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

void unsigned_integer(std::string& out, uint64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

void unsigned_list(std::string& out, const std::vector<uint32_t>& v) {
  out += '[';
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    unsigned_integer(out, v[i]);
  }
  out += ']';
}

void number(std::string& out, double v) {
  if (!std::isfinite(v)) {
    null(out);
    return;
  }
  char buf[40];
  auto r = std::to_chars(buf, buf + sizeof buf - 2, v);
  // Shortest form of an integral value has neither '.' nor exponent.
  if (std::memchr(buf, '.', r.ptr - buf) == nullptr &&
      std::memchr(buf, 'e', r.ptr - buf) == nullptr) {
    *r.ptr++ = '.';
    *r.ptr++ = '0';
  }
  out.append(buf, r.ptr);
}

}  // namespace gd::json_out
