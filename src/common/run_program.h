// Runs another program (argv, no shell) with a deadline and a cap on what it
// prints: the one way gpudoctor calls an outside tool (scontrol). A program
// that outlives its deadline is killed with its process group; its output
// past the cap is read and dropped, so a chatty or stuck tool never holds
// or bloats the caller.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace gd {

struct ProgramResult {
  bool started = false;          // false: exec failed (see error)
  bool timed_out = false;        // killed at the deadline
  std::optional<int> exit_code;  // set when it exited (not by a signal)
  std::string output;            // stdout and stderr together, capped
  std::string error;             // why it did not start or run to the end
  bool ok() const { return started && !timed_out && exit_code == 0; }
};

// Runs argv[0] (searched on PATH when it has no '/') with `argv`, stdin
// from /dev/null, stdout and stderr into one pipe; waits at most
// `deadline_s` seconds. Keeps the first `max_output` bytes. Thread-safe
// (posix_spawn; no descriptor but the pipe reaches the child).
ProgramResult run_program(const std::vector<std::string>& argv,
                          double deadline_s, size_t max_output = 64 * 1024);

// The result in one line for a log: "exit 1: <first line of output>",
// "timed out after 5 s", "cannot run scontrol: No such file or directory".
std::string program_failure_text(const ProgramResult& r,
                                 const std::string& name, double deadline_s);

}  // namespace gd
