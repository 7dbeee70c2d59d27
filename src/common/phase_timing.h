// GD_TIMING=1 in the environment: a one-shot command prints on stderr
// where its wall goes ("gpudoctor: timing: +11.4 ms (cpu 6.2 ms) nvml:
// nvmlInit"), from the first phase noted (main's start), and the process's
// CPU time so far (all threads, since exec), so that the cost of each step
// on a real driver can be read off a real machine. Unset: each call is a load
// of one cached flag.
#pragma once

#include <string_view>

namespace gd {

void note_phase(std::string_view what);

}  // namespace gd
