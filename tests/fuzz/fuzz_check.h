// Invariant checks for the libFuzzer harnesses: a broken invariant prints
// what and aborts, which libFuzzer records as a crash with its reproducer.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace gd::fuzz {

[[noreturn]] inline void fail(const char* file, int line, const char* what,
                              std::string_view detail) {
  std::fprintf(stderr, "%s:%d: invariant broken: %s\n  detail: %.*s\n", file,
               line, what, static_cast<int>(detail.size()), detail.data());
  std::abort();
}

// True when `text` is one line: no line feed or carriage return.
inline bool one_line(std::string_view text) {
  return text.find_first_of("\r\n") == std::string_view::npos;
}

}  // namespace gd::fuzz

// FUZZ_CHECK(cond, detail): detail is anything convertible to string_view.
#define FUZZ_CHECK(cond, detail) \
  ((cond) ? (void)0 : ::gd::fuzz::fail(__FILE__, __LINE__, #cond, (detail)))
