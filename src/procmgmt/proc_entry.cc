#include "procmgmt/proc_entry.h"

#include <algorithm>
#include <charconv>

#include "procfs/process_files.h"
#include "procfs/text_util.h"

namespace gd::procmgmt {

namespace {
// kthreadd: the parent of every kernel thread on Linux.
constexpr uint32_t kKthreaddPid = 2;
}  // namespace

bool ProcEntry::kernel_thread() const {
  if (pid == kKthreaddPid || ppid == kKthreaddPid) return true;
  return cmdline.empty() && !zombie();
}

std::string ProcEntry::command() const {
  // Raw bytes: every text view makes them terminal-safe (terminal_text.h),
  // which keeps a newline of `python -c "..."` visible as "\n" on one row.
  return cmdline.empty() ? "[" + comm + "]" : cmdline;
}

std::vector<uint32_t> parse_nspid(std::string_view text) {
  std::vector<uint32_t> out;
  std::string_view line;
  while (procfs::next_line(text, line)) {
    auto v = procfs::value_after_key(line, "NSpid");
    if (!v) continue;
    procfs::parse_pid_list(*v, out);
    break;
  }
  return out;
}

std::optional<ProcEntry> read_proc_entry(const std::string& proc_root,
                                         uint32_t pid) {
  std::string dir = proc_root + "/" + std::to_string(pid) + "/";
  std::string buf;
  if (!procfs::read_file(dir + "stat", buf)) return std::nullopt;
  auto st = procfs::parse_pid_stat(buf);
  if (!st) return std::nullopt;
  ProcEntry e;
  e.pid = pid;
  e.ppid = st->ppid;
  e.state = st->state;
  e.comm = st->comm;
  e.starttime = st->starttime;
  if (procfs::read_file(dir + "status", buf)) {
    e.uid = procfs::parse_status_euid(buf);
    e.nspid = parse_nspid(buf);
  }
  if (e.uid) e.user = user_name_of(*e.uid);
  // Both capped where read: a 1 MiB command line costs 4 KiB here.
  e.cmdline = procfs::read_cmdline((dir + "cmdline").c_str()).value_or("");
  e.cgroup = procfs::read_cgroup((dir + "cgroup").c_str(), &e.slurm_job_id);
  return e;
}

std::optional<std::string> environ_slurm_job_id(const std::string& proc_root,
                                                uint32_t pid) {
  const std::string path = proc_root + "/" + std::to_string(pid) + "/environ";
  return procfs::read_environ_slurm_job(path.c_str());
}

std::string describe_state(char state) {
  switch (state) {
    case 'R':
      return "running";
    case 'S':
      return "sleeping";
    case 'D':
      return "uninterruptible sleep (D)";
    case 'Z':
      return "zombie (Z)";
    case 'X':
      return "dead (X)";
    case 'T':
      return "stopped (T)";
    case 't':
      return "stopped by a debugger (t)";
    case 'I':
      return "idle kernel thread";
    default:
      return std::string("state ") + state;
  }
}

}  // namespace gd::procmgmt
