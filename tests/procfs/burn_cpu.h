// Test helper for the live /proc tests: a child that uses an exact amount
// of CPU time, so that what the process table reports can be checked.
#pragma once

#include <time.h>

#include <cstdint>

namespace gd::test {

inline double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// Spins until this process has used `seconds` more CPU time.
inline void burn_cpu(double seconds) {
  double start = process_cpu_seconds();
  volatile uint64_t x = 0;
  while (process_cpu_seconds() - start < seconds)
    x = x * 6364136223846793005ull + 1;
}

}  // namespace gd::test
