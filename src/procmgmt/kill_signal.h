// Sending signals to planned targets without hitting the wrong process:
// each target is pinned with a pidfd (Linux >= 5.3) right after its start
// time is re-checked, so a pid reused between planning and sending is never
// signalled. Every signal sent is logged to syslog (LOG_AUTHPRIV).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "procmgmt/proc_entry.h"

namespace gd::procmgmt {

// "TERM", "SIGTERM", "term", "15" -> 15; nullopt for an unknown name.
std::optional<int> parse_signal(const std::string& text);
// 15 -> "SIGTERM".
std::string signal_name(int sig);

// Who asked for a signal, for the audit log.
struct Requester {
  uint32_t uid = 0;
  std::string user;
  std::string tty;  // "/dev/pts/3", or "none"
  // "" when asked on this machine; else who asked over the network, e.g.
  // "remote user alice from 10.0.0.5" (serve's POST /api/v1/kill): the
  // uid, user and tty are then those of the daemon that sends the signal.
  std::string remote;
  static Requester current();
};

// The syslog line of a signal sent (untrusted text made terminal-safe):
// "kill: sent SIGTERM to pid 42 (python train.py, user alice) as requested
// by uid 0 (root) on tty /dev/pts/3", or for a remote request "... as
// requested by remote user ops from 10.0.0.5 through gpudoctor serve (uid
// 0, root)".
std::string kill_audit_line(int sig, const ProcEntry& p, const Requester& who);

enum class Liveness { kAlive, kZombie, kGone };

// The planned process as it is now: kGone when its pid no longer exists or
// now names a different process (other start time).
Liveness liveness_of(const std::string& proc_root, const ProcEntry& planned);

class PinnedProcess {
 public:
  // Pins `planned`; gone() is true when it already exited or its pid was
  // reused.
  PinnedProcess(const std::string& proc_root, const ProcEntry& planned);
  ~PinnedProcess();
  PinnedProcess(PinnedProcess&& o) noexcept;
  PinnedProcess(const PinnedProcess&) = delete;
  PinnedProcess& operator=(const PinnedProcess&) = delete;
  PinnedProcess& operator=(PinnedProcess&&) = delete;

  const ProcEntry& proc() const { return proc_; }
  bool gone() const { return gone_; }
  // Sends `sig`; "" on success, else why not (ESRCH: it exited meanwhile).
  // Logs the attempt to syslog on success.
  std::string send(int sig, const Requester& who);

 private:
  std::string proc_root_;
  ProcEntry proc_;
  int pidfd_ = -1;
  bool gone_ = false;
};

}  // namespace gd::procmgmt
