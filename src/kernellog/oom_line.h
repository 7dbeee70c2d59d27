// Kernel OOM-killer lines. One kill prints several lines:
//   oom-kill:constraint=CONSTRAINT_NONE,...,task=python,pid=1234,uid=1000
//   Out of memory: Killed process 1234 (python) total-vm:... (global)
//   Memory cgroup out of memory: Killed process 1234 (python) ...  (cgroup)
//   oom_reaper: reaped process 1234 (python), now anon-rss:0kB, ...
// Exactly one line per kill is turned into an event: the one with
// "Killed process <pid>" (every kernel since 2.6 prints it; before 5.0 it
// followed "Out of memory: Kill process N (x) score S or sacrifice child",
// which has no "Killed" and is ignored). The oom-kill: summary (4.19+) and
// the reaper line are ignored, so one kill never yields two events.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace gd::kernellog {

struct OomLine {
  uint32_t pid = 0;
};

std::optional<OomLine> parse_oom_kill(std::string_view message);

}  // namespace gd::kernellog
