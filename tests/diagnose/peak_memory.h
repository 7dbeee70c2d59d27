// Peak memory in the tests' own process: max_rss_kib(), and GD_TEST_ASAN,
// 1 when built with AddressSanitizer (GCC says so with __SANITIZE_ADDRESS__,
// clang with __has_feature(address_sanitizer)), whose quarantine keeps
// freed blocks (256 MiB by default): peak RSS then says nothing about what
// the code holds.
#pragma once

#include <sys/resource.h>

#if defined(__SANITIZE_ADDRESS__)
#define GD_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GD_TEST_ASAN 1
#endif
#endif
#ifndef GD_TEST_ASAN
#define GD_TEST_ASAN 0
#endif

namespace gd::test {

// The process's peak resident set so far, KiB (getrusage's ru_maxrss).
inline long max_rss_kib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

}  // namespace gd::test
