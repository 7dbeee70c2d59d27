#include "common/phase_timing.h"

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
  std::fprintf(stderr, "gpudoctor: timing: %+8.1f ms %.*s\n", ms,
               static_cast<int>(what.size()), what.data());
}

}  // namespace gd
