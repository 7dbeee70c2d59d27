#include "common/run_program.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>

extern char** environ;

namespace gd {
namespace {

using Clock = std::chrono::steady_clock;

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

// Waits for `pid`, at most until `until`; kills its group at the deadline.
int reap(pid_t pid, Clock::time_point until, bool& timed_out) {
  int status = 0;
  for (;;) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return status;
    if (r < 0 && errno != EINTR) return 0;
    if (Clock::now() >= until) {
      timed_out = true;
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      return status;
    }
    usleep(2000);
  }
}

}  // namespace

ProgramResult run_program(const std::vector<std::string>& argv,
                          double deadline_s, size_t max_output) {
  ProgramResult out;
  if (argv.empty()) {
    out.error = "no program";
    return out;
  }
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) {
    out.error = std::string("pipe: ") + std::strerror(errno);
    return out;
  }
  Fd rd{p[0]}, wr{p[1]};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, wr.fd, 1);
  posix_spawn_file_actions_adddup2(&fa, wr.fd, 2);
  // Sockets and files the caller opened without O_CLOEXEC stay behind.
  posix_spawn_file_actions_addclosefrom_np(&fa, 3);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Its own process group: the deadline kills its children too. Default
  // signal handling and an empty mask, whatever the caller blocked.
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP |
                                      POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  int rc =
      posix_spawnp(&pid, argv[0].c_str(), &fa, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  close(wr.fd);
  wr.fd = -1;
  if (rc != 0) {
    out.error = "cannot run " + argv[0] + ": " + std::strerror(rc);
    return out;
  }
  out.started = true;
  const auto until =
      Clock::now() +
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
          std::isfinite(deadline_s) && deadline_s > 0 ? deadline_s : 0));
  char buf[4096];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    until - Clock::now())
                    .count();
    if (left <= 0) break;
    pollfd pfd{rd.fd, POLLIN, 0};
    int n = poll(&pfd, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    ssize_t got = read(rd.fd, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;  // EOF: every writer closed
    size_t room = max_output - std::min(max_output, out.output.size());
    out.output.append(buf, std::min(room, static_cast<size_t>(got)));
  }
  int status = reap(pid, until, out.timed_out);
  if (!out.timed_out && WIFEXITED(status)) out.exit_code = WEXITSTATUS(status);
  if (out.timed_out)
    out.error = "timed out";
  else if (!out.exit_code)
    out.error = "killed by a signal";
  return out;
}

std::string program_failure_text(const ProgramResult& r,
                                 const std::string& name, double deadline_s) {
  if (!r.started) return r.error;
  if (r.timed_out) {
    char s[64];
    std::snprintf(s, sizeof s, "%s timed out after %g s", name.c_str(),
                  deadline_s);
    return s;
  }
  std::string first = r.output.substr(0, r.output.find('\n'));
  if (first.size() > 300) first.resize(300);
  if (!r.exit_code) return name + " was killed by a signal";
  return name + " exited " + std::to_string(*r.exit_code) +
         (first.empty() ? "" : ": " + first);
}

}  // namespace gd
