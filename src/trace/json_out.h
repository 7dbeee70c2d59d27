// Low-level JSON text output for the trace writer: appends to a std::string
// that the caller reuses, so writing a sample allocates nothing once warm.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gd::json_out {

// Appends a string literal without strlen (keys are written as literals such
// as ",\"util_pct\":").
template <size_t N>
inline void lit(std::string& out, const char (&s)[N]) {
  out.append(s, N - 1);
}

// Appends `s` as a quoted JSON string. Quotes, backslashes and control
// characters are escaped; bytes that are not valid UTF-8 (process names and
// command lines come from /proc and may hold anything) are replaced by U+FFFD
// so the output is always valid UTF-8 and valid JSON.
void string(std::string& out, std::string_view s);

void integer(std::string& out, int64_t v);
void unsigned_integer(std::string& out, uint64_t v);
// [1,2,3]: pids and other id lists.
void unsigned_list(std::string& out, const std::vector<uint32_t>& v);

// Shortest text that reads back to the same double; always has a '.' or an
// exponent so readers see a float ("97.0", not "97"). Non-finite -> null,
// because JSON has no NaN or infinity.
void number(std::string& out, double v);

inline void boolean(std::string& out, bool v) {
  if (v) {
    lit(out, "true");
  } else {
    lit(out, "false");
  }
}

inline void null(std::string& out) { lit(out, "null"); }

// std::nullopt -> null.
inline void value(std::string& out, const std::optional<double>& v) {
  if (v) {
    number(out, *v);
  } else {
    null(out);
  }
}
inline void value(std::string& out, const std::optional<int>& v) {
  if (v) {
    integer(out, *v);
  } else {
    null(out);
  }
}
inline void value(std::string& out, const std::optional<uint32_t>& v) {
  if (v) {
    unsigned_integer(out, *v);
  } else {
    null(out);
  }
}
inline void value(std::string& out, const std::optional<uint64_t>& v) {
  if (v) {
    unsigned_integer(out, *v);
  } else {
    null(out);
  }
}
inline void value(std::string& out, const std::optional<bool>& v) {
  if (v) {
    boolean(out, *v);
  } else {
    null(out);
  }
}
inline void value(std::string& out, const std::optional<std::string>& v) {
  if (v) {
    string(out, *v);
  } else {
    null(out);
  }
}

// For header strings where "" means unknown: "" -> null.
inline void string_or_null(std::string& out, std::string_view s) {
  if (s.empty()) {
    null(out);
  } else {
    string(out, s);
  }
}

}  // namespace gd::json_out
