#include "slurm/run_bounded.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

extern char** environ;

namespace gd::slurm {
namespace {

using Clock = std::chrono::steady_clock;

int ms_left(Clock::time_point until) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      until - Clock::now());
  return left.count() < 0 ? 0 : static_cast<int>(left.count());
}

}  // namespace

RunResult run_bounded(const std::vector<std::string>& argv,
                      std::chrono::milliseconds deadline, size_t max_out,
                      std::atomic<pid_t>* running) {
  RunResult r;
  if (argv.empty()) {
    r.error = "no program";
    return r;
  }
  const Clock::time_point until = Clock::now() + deadline;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    r.error = std::string("pipe: ") + std::strerror(errno);
    return r;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Its own process group (killed as one), default signal handling.
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
  pid_t pid = 0;
  int rc =
      argv[0].find('/') == std::string::npos
          ? posix_spawnp(&pid, args[0], &actions, &attr, args.data(), environ)
          : posix_spawn(&pid, args[0], &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    r.error = argv[0] + ": " + std::strerror(rc);
    return r;
  }
  r.started = true;
  if (running) running->store(pid);
  bool killed = false;
  auto kill_group = [&] {
    if (!killed) ::kill(-pid, SIGKILL);
    killed = true;
  };
  char chunk[4096];
  for (;;) {
    pollfd p{fds[0], POLLIN, 0};
    int n = ::poll(&p, 1, ms_left(until));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      r.timed_out = true;
      kill_group();
      break;
    }
    ssize_t got = ::read(fds[0], chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;  // end of output
    size_t room = max_out - r.out.size();
    if (static_cast<size_t>(got) > room) {
      r.out.append(chunk, room);
      r.output_cut = true;
      kill_group();
      break;
    }
    r.out.append(chunk, static_cast<size_t>(got));
  }
  ::close(fds[0]);
  // Output closed: it is exiting, or it closed stdout and stays on. Wait
  // for its exit without reaping it, so that its pid (the group's id)
  // cannot be reused before the group's other members are killed.
  for (;;) {
    siginfo_t info{};
    int w = ::waitid(P_PID, static_cast<id_t>(pid), &info,
                     WEXITED | WNOWAIT | (killed ? 0 : WNOHANG));
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 || info.si_pid == pid) break;
    if (ms_left(until) == 0) {
      r.timed_out = true;
      kill_group();
      continue;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  // The group's other members (a script's children) go with it.
  if (!killed) ::kill(-pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (running) running->store(0);
  if (!r.timed_out && !r.output_cut && WIFEXITED(status))
    r.exit_code = WEXITSTATUS(status);
  return r;
}

}  // namespace gd::slurm
