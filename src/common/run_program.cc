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
#include <thread>

extern char** environ;

namespace gd {
namespace {

using Clock = std::chrono::steady_clock;

int ms_left(Clock::time_point until) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      until - Clock::now());
  return static_cast<int>(std::clamp<long long>(left.count(), 0, 1000));
}

struct Spawned {
  pid_t pid = -1;
  int out_fd = -1;  // read end of the program's stdout
  std::string error;
};

Spawned spawn(const std::vector<std::string>& argv, bool with_stderr) {
  Spawned s;
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) {
    s.error = std::string("pipe: ") + std::strerror(errno);
    return s;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, p[1], 1);
  if (with_stderr)
    posix_spawn_file_actions_adddup2(&fa, p[1], 2);
  else
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  // Sockets and files the caller opened without O_CLOEXEC stay behind.
  posix_spawn_file_actions_addclosefrom_np(&fa, 3);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Its own process group (killed as one); default signal handling and an
  // empty mask, whatever the caller blocked.
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
  int rc = posix_spawnp(&s.pid, args[0], &fa, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  close(p[1]);
  if (rc != 0) {
    close(p[0]);
    s.pid = -1;
    s.error = "cannot run " + argv[0] + ": " + std::strerror(rc);
    return s;
  }
  s.out_fd = p[0];
  return s;
}

// Reads the program's output until it closes it, the deadline passes or
// (when asked) the cap is passed. Returns true when the group must be
// killed.
bool read_output(int fd, Clock::time_point until, const ProgramOptions& o,
                 ProgramResult& r) {
  char chunk[4096];
  for (;;) {
    if (Clock::now() >= until) {
      r.timed_out = true;
      return true;
    }
    pollfd p{fd, POLLIN, 0};
    int n = poll(&p, 1, ms_left(until));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;  // the deadline check above ends it
    ssize_t got = read(fd, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;  // end of output
    size_t room = o.max_output - std::min(o.max_output, r.output.size());
    r.output.append(chunk, std::min(room, static_cast<size_t>(got)));
    if (static_cast<size_t>(got) > room) {
      r.output_cut = true;
      if (o.kill_past_cap) return true;
    }
  }
}

}  // namespace

ProgramResult run_program(const std::vector<std::string>& argv,
                          const ProgramOptions& o) {
  ProgramResult r;
  if (argv.empty()) {
    r.error = "no program";
    return r;
  }
  const double deadline_s =
      std::isfinite(o.deadline_s) && o.deadline_s > 0 ? o.deadline_s : 0;
  const auto until =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(deadline_s));
  Spawned s = spawn(argv, o.with_stderr);
  if (s.pid < 0) {
    r.error = s.error;
    return r;
  }
  r.started = true;
  if (o.running) o.running->store(s.pid);
  bool killed = false;
  auto kill_group = [&] {
    if (!killed) kill(-s.pid, SIGKILL);
    killed = true;
  };
  if (read_output(s.out_fd, until, o, r)) kill_group();
  close(s.out_fd);
  // Output closed: it is exiting, or it closed stdout and stays on. Wait
  // for its exit without reaping it, so that its pid (the group's id)
  // cannot be reused before the group's other members are killed.
  for (;;) {
    siginfo_t info{};
    int w = waitid(P_PID, static_cast<id_t>(s.pid), &info,
                   WEXITED | WNOWAIT | (killed ? 0 : WNOHANG));
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 || info.si_pid == s.pid) break;
    if (Clock::now() >= until) {
      r.timed_out = true;
      kill_group();
      continue;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  // The group's other members (a script's children) go with it.
  if (!killed) kill(-s.pid, SIGKILL);
  int status = 0;
  while (waitpid(s.pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (o.running) o.running->store(0);
  if (!killed && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (r.timed_out)
    r.error = "timed out";
  else if (killed)
    r.error = "printed more than " + std::to_string(o.max_output) + " bytes";
  else if (!r.exit_code)
    r.error = "killed by a signal";
  return r;
}

ProgramResult run_program(const std::vector<std::string>& argv,
                          double deadline_s, size_t max_output) {
  ProgramOptions o;
  o.deadline_s = deadline_s;
  o.max_output = max_output;
  return run_program(argv, o);
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
  if (!r.exit_code && r.output_cut)
    return name + " " + r.error + " and was stopped";
  std::string first = r.output.substr(0, r.output.find('\n'));
  if (first.size() > 300) first.resize(300);
  if (!r.exit_code) return name + " was killed by a signal";
  return name + " exited " + std::to_string(*r.exit_code) +
         (first.empty() ? "" : ": " + first);
}

}  // namespace gd
