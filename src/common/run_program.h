// Runs another program (argv, no shell) with a deadline and a cap on what it
// prints: the one way gpudoctor calls an outside tool (scontrol). The
// program runs in its own process group; past its deadline the whole group
// is killed (a shell script's `sleep` child included), so a stuck or chatty
// tool never holds or bloats the caller.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace gd {

struct ProgramOptions {
  double deadline_s = 5;
  size_t max_output = 64 * 1024;
  // false: stderr goes to /dev/null, for a caller that parses stdout alone.
  bool with_stderr = true;
  // true: output past the cap kills the program (a flood is garbage, not
  // worth waiting for); false: it is read and dropped until the program
  // exits by itself.
  bool kill_past_cap = false;
  // When given, holds the program's process group while it runs (0
  // otherwise), so that another thread can kill it early.
  std::atomic<pid_t>* running = nullptr;
};

struct ProgramResult {
  bool started = false;          // false: exec failed (see error)
  bool timed_out = false;        // killed at the deadline
  bool output_cut = false;       // printed past the cap (killed if asked)
  std::optional<int> exit_code;  // set when it exited by itself
  std::string output;            // stdout (and stderr if asked), capped
  std::string error;             // why it did not start or run to the end
  bool ok() const { return started && !timed_out && exit_code == 0; }
};

// Runs argv[0] (searched on PATH when it has no '/') with `argv`, stdin
// from /dev/null. Thread-safe (posix_spawn; no descriptor of the caller but
// the pipe reaches the program).
ProgramResult run_program(const std::vector<std::string>& argv,
                          const ProgramOptions& options);

// The common case: stdout and stderr together, output past the cap dropped.
ProgramResult run_program(const std::vector<std::string>& argv,
                          double deadline_s, size_t max_output = 64 * 1024);

// The result in one line for a log: "exit 1: <first line of output>",
// "timed out after 5 s", "cannot run scontrol: No such file or directory".
std::string program_failure_text(const ProgramResult& r,
                                 const std::string& name, double deadline_s);

}  // namespace gd
