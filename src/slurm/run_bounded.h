// Runs a program with a deadline and a bound on what it prints: for asking
// another daemon's command-line client (scontrol) something that must never
// slow or hang a gpudoctor command. The program runs in its own process
// group; past the deadline or the output bound the whole group is killed
// (a shell script's `sleep` child included).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

namespace gd::slurm {

struct RunResult {
  bool started = false;     // false: not found or not executable (`error`)
  bool timed_out = false;   // killed at the deadline
  bool output_cut = false;  // printed more than the bound (then killed)
  int exit_code = -1;       // -1 unless it exited by itself
  std::string out;          // stdout, at most the bound
  std::string error;        // why it did not start
};

// argv[0] is looked up on PATH when it has no '/'. stdin and stderr are
// /dev/null. `running`, when given, holds the child's process group while
// it runs (0 otherwise), so that another thread can kill it early.
RunResult run_bounded(const std::vector<std::string>& argv,
                      std::chrono::milliseconds deadline, size_t max_out,
                      std::atomic<pid_t>* running = nullptr);

}  // namespace gd::slurm
