// A child process that waits for signals, for the tests that end processes
// (procmgmt's kill session, serve's remote kill, top's kill job).
#pragma once

#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

namespace gd::test {

// Forks a child that pauses until signalled; with `ignore_term` it outlives
// SIGTERM. Returns once the child has set itself up, so a signal sent at once
// cannot reach it before it ignores TERM (on a loaded machine the child may
// not run for a while after fork). -1 when it could not be started.
inline pid_t spawn_waiting_child(bool ignore_term = false) {
  int ready[2];
  if (pipe(ready) != 0) return -1;
  pid_t child = fork();
  if (child == 0) {
    if (ignore_term) signal(SIGTERM, SIG_IGN);
    char c = 'r';
    if (write(ready[1], &c, 1) != 1) _exit(1);
    for (;;) pause();
  }
  close(ready[1]);  // so a child that died before writing reads as EOF
  char c;
  if (child > 0 && read(ready[0], &c, 1) != 1) child = -1;
  close(ready[0]);
  return child;
}

}  // namespace gd::test
