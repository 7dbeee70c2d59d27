// Parsers for the per-process files under /proc/<pid>/.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gd::procfs {

// /proc/<pid>/stat. The command name (comm) sits in parentheses and may
// itself contain spaces and ')' (it is whatever the process set, up to 15
// bytes), so the fields are split after the LAST ')' of the line.
struct PidStat {
  std::string comm;
  char state = '?';
  uint32_t ppid = 0;
  uint64_t utime = 0, stime = 0;  // clock ticks
  int num_threads = 0;
  uint64_t starttime = 0;  // clock ticks after boot
  uint64_t rss_pages = 0;
};
std::optional<PidStat> parse_pid_stat(std::string_view text);

// /proc/<pid>/schedstat (of the main thread): "on-CPU ns, runqueue-wait ns,
// times scheduled". The counters move whenever the thread runs, so equal
// readings mean it has not run in between. nullopt when malformed or all
// zero (a kernel without CONFIG_SCHED_INFO prints zeros).
struct SchedStat {
  uint64_t run_ns = 0, wait_ns = 0, timeslices = 0;
  bool operator==(const SchedStat&) const = default;
};
std::optional<SchedStat> parse_schedstat(std::string_view text);

// Effective uid from the "Uid:" line of /proc/<pid>/status.
std::optional<uint32_t> parse_status_euid(std::string_view text);

// The last value of the "NSpid:" line of /proc/<pid>/status: the process's
// pid inside its own (innermost) PID namespace, e.g. 1 for a container's
// first process. nullopt when the line is missing (kernels before 4.1).
std::optional<uint32_t> parse_status_ns_pid(std::string_view text);

// Size in bytes of the filesystem mounted at `path` (statvfs); nullopt when
// it cannot be looked at. /proc/<pid>/root/dev/shm gives the /dev/shm the
// process sees, inside its container.
std::optional<uint64_t> filesystem_size(const char* path);

// Whether proc_root's pids are this process's pid namespace's: its "self"
// names this process (another namespace's procfs, --proc-root /host/proc
// in a container, names it by its pid there, or not at all); nullopt where
// there is no "self" link (a fixture tree).
std::optional<bool> proc_pids_are_own(const std::string& proc_root);

// The kernel's CPU clock of a process of this pid namespace: its threads'
// run time in nanoseconds (what stat's utime + stime count in ticks), or
// nullopt when no process has that pid. One system call where a stat or
// schedstat read has the kernel format a text. Only for a /proc whose pids
// are this process's own (proc_pids_are_own).
std::optional<uint64_t> own_process_cpu_ns(uint32_t pid);

// A process's CPU time in nanoseconds (all its threads), or nullopt: what
// the readers of /proc take their CPU clocks from (a test gives a fixture's).
using CpuClock = std::function<std::optional<uint64_t>(uint32_t pid)>;
// own_process_cpu_ns where proc_root's pids are this process's own
// (`own_pids`, proc_pids_are_own) and this process's own clock can be read
// (a sandbox may refuse CPU clocks); else empty: none to read.
CpuClock own_cpu_clock(bool own_pids);

// /proc/<pid>/cmdline: NUL-separated argv -> space-separated, trailing NULs
// and blanks removed. Empty for kernel threads and zombies.
std::string cmdline_from_raw(std::string_view raw);

// Reads /proc/<pid>/cmdline at `path` as cmdline_from_raw does, keeping at
// most kProcessTextMax bytes of it (then "…[truncated N bytes]"); nullopt
// when it cannot be read.
std::optional<std::string> read_cmdline(const char* path);

// Reads /proc/<pid>/cgroup at `path` and parses it as parse_cgroup does,
// the path capped at kProcessTextMax bytes.
// With `slurm_job`, also the Slurm job that any line of the file names
// (common/slurm_job_id.h), from the same read.
std::optional<std::string> read_cgroup(
    const char* path, std::optional<std::string>* slurm_job = nullptr);

// SLURM_JOB_ID from /proc/<pid>/environ at `path`, of which at most
// kEnvironReadMax bytes are read (Slurm sets its variables before the job
// adds its own; a job with a larger environment and no cgroup to tell is
// not known). Readable by the process's user and root only.
inline constexpr size_t kEnvironReadMax = 128 * 1024;
std::optional<std::string> read_environ_slurm_job(const char* path);

// /proc/<pid>/cgroup lines "hierarchy-id:controllers:path". The cgroup v2
// line ("0::/path") wins; otherwise the first v1 line's path.
std::optional<std::string> parse_cgroup(std::string_view text);

// File names (not paths) of CUDA-related libraries mapped by the process,
// from /proc/<pid>/maps: libcudart, libcuda, libcublas, libcublasLt,
// libcudnn*, libnccl, libnvrtc. Deduplicated and sorted.
std::vector<std::string> parse_maps_cuda_libs(std::string_view text);
// The same for <proc_root>/<pid>/maps, read up to a bound (a CUDA
// process's maps is a few hundred KiB); empty when it cannot be read.
std::vector<std::string> read_maps_cuda_libs(const std::string& proc_root,
                                             uint32_t pid);
bool is_cuda_library_name(std::string_view file_name);

// /proc/<pid>/task/<tid>/children: "123 456 " -> appended to `out`.
void parse_pid_list(std::string_view text, std::vector<uint32_t>& out);

}  // namespace gd::procfs
