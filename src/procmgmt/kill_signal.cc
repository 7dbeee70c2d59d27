#include "procmgmt/kill_signal.h"

#include <fmt/format.h>
#include <sys/syscall.h>
#include <syslog.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstring>

#include "common/terminal_text.h"
#include "procfs/process_files.h"
#include "procfs/text_util.h"

namespace gd::procmgmt {

namespace {

struct NamedSignal {
  const char* name;
  int number;
};
constexpr NamedSignal kSignals[] = {
    {"HUP", SIGHUP},   {"INT", SIGINT},   {"QUIT", SIGQUIT}, {"ABRT", SIGABRT},
    {"KILL", SIGKILL}, {"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"TERM", SIGTERM},
    {"CONT", SIGCONT}, {"STOP", SIGSTOP}, {"ALRM", SIGALRM}, {"XCPU", SIGXCPU}};

int pidfd_open(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  errno = ENOSYS;
  return -1;
#endif
}

int pidfd_send_signal(int fd, int sig) {
#ifdef SYS_pidfd_send_signal
  return static_cast<int>(syscall(SYS_pidfd_send_signal, fd, sig, nullptr, 0));
#else
  (void)fd;
  (void)sig;
  errno = ENOSYS;
  return -1;
#endif
}

}  // namespace

std::optional<int> parse_signal(const std::string& text) {
  std::string t = text;
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) {
    return static_cast<char>(std::toupper(c));
  });
  if (t.starts_with("SIG")) t = t.substr(3);
  for (const auto& s : kSignals)
    if (t == s.name) return s.number;
  if (auto n = procfs::parse_u64(t);
      n && *n >= 1 && *n < static_cast<uint64_t>(NSIG))
    return static_cast<int>(*n);
  return std::nullopt;
}

std::string signal_name(int sig) {
  for (const auto& s : kSignals)
    if (s.number == sig) return std::string("SIG") + s.name;
  return fmt::format("signal {}", sig);
}

Requester Requester::current() {
  Requester r;
  r.uid = getuid();
  r.user = user_name_of(r.uid);
  const char* tty = ttyname(STDIN_FILENO);
  r.tty = tty ? tty : "none";
  return r;
}

std::string kill_audit_line(int sig, const ProcEntry& p, const Requester& who) {
  std::string line =
      fmt::format("kill: sent {} to pid {} ({}, user {}) as requested by ",
                  signal_name(sig), p.pid, terminal_safe(p.command(), 200),
                  terminal_safe(p.user, 64));
  if (who.remote.empty())
    line +=
        fmt::format("uid {} ({}) on tty {}", who.uid,
                    terminal_safe(who.user, 64), terminal_safe(who.tty, 64));
  else
    line += fmt::format("{} through gpudoctor serve (uid {}, {})",
                        terminal_safe(who.remote, 200), who.uid,
                        terminal_safe(who.user, 64));
  return line;
}

Liveness liveness_of(const std::string& proc_root, const ProcEntry& planned) {
  std::string buf;
  if (!procfs::read_file(
          proc_root + "/" + std::to_string(planned.pid) + "/stat", buf))
    return Liveness::kGone;
  auto st = procfs::parse_pid_stat(buf);
  if (!st || st->starttime != planned.starttime) return Liveness::kGone;
  return st->state == 'Z' || st->state == 'X' ? Liveness::kZombie
                                              : Liveness::kAlive;
}

PinnedProcess::PinnedProcess(const std::string& proc_root,
                             const ProcEntry& planned)
    : proc_root_(proc_root), proc_(planned) {
  pidfd_ = pidfd_open(static_cast<pid_t>(planned.pid));
  // Checked after opening: if the start time still matches, the pidfd names
  // the planned process (a pidfd never follows a reused pid).
  if (liveness_of(proc_root_, proc_) == Liveness::kGone) gone_ = true;
}

PinnedProcess::PinnedProcess(PinnedProcess&& o) noexcept
    : proc_root_(std::move(o.proc_root_)),
      proc_(std::move(o.proc_)),
      pidfd_(o.pidfd_),
      gone_(o.gone_) {
  o.pidfd_ = -1;
}

PinnedProcess::~PinnedProcess() {
  if (pidfd_ >= 0) close(pidfd_);
}

std::string PinnedProcess::send(int sig, const Requester& who) {
  if (gone_) return "it has already exited";
  int rc;
  if (pidfd_ >= 0) {
    rc = pidfd_send_signal(pidfd_, sig);
  } else {
    // No pidfd (old kernel): re-check the start time right before kill(2);
    // the remaining window is the one every kill(1) has.
    if (liveness_of(proc_root_, proc_) == Liveness::kGone) {
      gone_ = true;
      return "it has already exited";
    }
    rc = kill(static_cast<pid_t>(proc_.pid), sig);
  }
  if (rc != 0) {
    if (errno == ESRCH) {
      gone_ = true;
      return "it has already exited";
    }
    return std::strerror(errno);
  }
  openlog("gpudoctor", LOG_PID, LOG_AUTHPRIV);
  syslog(LOG_AUTHPRIV | LOG_NOTICE, "%s",
         kill_audit_line(sig, proc_, who).c_str());
  closelog();
  return {};
}

}  // namespace gd::procmgmt
