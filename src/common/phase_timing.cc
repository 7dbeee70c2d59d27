#include "common/phase_timing.h"

#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace gd {

void note_phase(std::string_view what) {
  static const bool on = std::getenv("GD_TIMING") != nullptr;
  if (!on) return;
  using Clock = std::chrono::steady_clock;
  static const Clock::time_point origin = Clock::now();
  const double ms =
      std::chrono::duration<double, std::milli>(Clock::now() - origin).count();
  // The process's CPU time (every thread, user + system) since exec.
  timespec cpu{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
  const double cpu_ms = static_cast<double>(cpu.tv_sec) * 1e3 +
                        static_cast<double>(cpu.tv_nsec) / 1e6;
  std::fprintf(stderr, "gpudoctor: timing: %+8.1f ms (cpu %5.1f ms) %.*s\n", ms,
               cpu_ms, static_cast<int>(what.size()), what.data());
}

}  // namespace gd
