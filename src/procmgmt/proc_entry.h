// One process as /proc shows it, with the facts that process management
// needs and the sampler's ProcessSample does not carry: effective uid, PID
// namespace ids (NSpid), the raw state letter and the start time in ticks
// (which, with the pid, names a process even after its pid is reused).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/user_name.h"

namespace gd::procmgmt {

struct ProcEntry {
  uint32_t pid = 0;
  uint32_t ppid = 0;
  char state = '?';             // R S D Z T t X I ...
  std::optional<uint32_t> uid;  // effective uid; unknown if status unreadable
  std::string user;             // name of uid, or the number
  std::string comm;             // /proc/PID/stat comm
  std::string cmdline;  // space-separated argv; "" for kernel threads, zombies
  std::optional<std::string> cgroup;
  // The Slurm job its cgroup names (common/slurm_job_id.h); the
  // environment is read only where asked (environ_slurm_job_id).
  std::optional<std::string> slurm_job_id;
  // NSpid: this process's pid in each PID namespace from the one of the
  // /proc we read (first) down to its own (last). More than one entry: it
  // lives in a nested PID namespace (a container), and the last entry is
  // the pid its own tools show.
  std::vector<uint32_t> nspid;
  uint64_t starttime = 0;  // clock ticks after boot

  bool zombie() const { return state == 'Z' || state == 'X'; }
  bool uninterruptible() const { return state == 'D'; }
  // kthreadd (pid 2) and its children; a live process without a command
  // line is treated the same (kernel threads have none).
  bool kernel_thread() const;
  // The command line, or "[comm]" when there is none (ps style).
  std::string command() const;
  bool in_nested_pid_namespace() const { return nspid.size() > 1; }
};

// "NSpid:\t4242\t17" from /proc/PID/status -> {4242, 17}; empty when absent
// (kernels before 4.1).
std::vector<uint32_t> parse_nspid(std::string_view status_text);

// Reads /proc/PID/{stat,status,cmdline,cgroup} under `proc_root`.
// nullopt when the process does not exist (or stat cannot be parsed).
std::optional<ProcEntry> read_proc_entry(const std::string& proc_root,
                                         uint32_t pid);

// SLURM_JOB_ID from /proc/PID/environ under `proc_root` (bounded read;
// readable by the process's user and root only); nullopt when absent.
std::optional<std::string> environ_slurm_job_id(const std::string& proc_root,
                                                uint32_t pid);

// One-line description of a state letter: "running", "uninterruptible sleep
// (D)".
std::string describe_state(char state);

}  // namespace gd::procmgmt
