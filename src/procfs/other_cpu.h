// The busiest processes outside every GPU job (host.other_cpu_top): the
// other work that competes with the jobs for the CPUs. The process table
// only reads GPU processes and their relatives, so this reads everything
// else, as cheaply as it can:
//  - /proc is listed every kListEvery readings (new pids; the kernel's
//    cost is per process listed, job workers included), unless no pid was
//    allocated since the last listing (/proc/loadavg's last pid: no process
//    can have started) or it was under kMinLifetimeSeconds ago (a one-shot
//    command's two readings: a process started since is too young for a
//    CPU%); in between, the processes already known are read. An exit
//    shows as a failed read. Where only a few pids were allocated since
//    (the kernel hands them out in turn), each of them is asked whether it
//    is a process instead of listing /proc: at most kProbeMin pids or half
//    as many as there are known processes, each a fraction of a listing's
//    cost per process; every kFullListingEvery-th listing is a full one;
//  - a process is read (its stat: utime + stime of all its threads; and,
//    on this machine's own /proc, the kernel's CPU clock of the process,
//    the same time in nanoseconds) when
//    first seen, when it has no CPU% yet, at every listing when it is one
//    of the kHotMax busiest, and otherwise once per kSlices readings (by
//    pid), its CPU% then averaged over those readings. A process that
//    turns busy is seen within kSlices readings, one that exits leaves the
//    list at the next listing. A process read again within
//    kClockOnlySeconds of its stat (every process at a one-shot command's
//    second reading, ~30 ms after its first) has only its CPU clock read,
//    one system call instead of the kernel writing out stat's 52 fields.
//    (A stat read costs ~10 us; reading the busiest every sample doubled
//    the cost for a fresher CPU%.) The stat
//    file of a process whose stat is read again at the next reading (the
//    busiest; one without a CPU% yet where there is no CPU clock) stays
//    open until then;
//  - members of a GPU job (as the last set_jobs() said) are not read at
//    all: the process table reads them, and a training node's hundreds of
//    data-loader workers are most of its processes.
// A process first seen after the first listing has started since the
// previous one, so its CPU% is its lifetime average: a short-lived busy
// process (a compiler of a parallel build) still shows if it lives until a
// listing.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/sample.h"
#include "procfs/kept_file.h"
#include "procfs/process_files.h"

namespace gd::procfs {

class OtherCpuScan {
 public:
  explicit OtherCpuScan(std::string proc_root);

  // Takes a reading at `now` (Unix seconds). btime: boot time (Unix
  // seconds), for the lifetime CPU% of new processes; nullopt: none.
  void read(double now, std::optional<uint64_t> btime);

  // What is inside a GPU job, for the readings and top() that follow: the
  // GPU processes, and `job_processes` (the process table's GPU processes,
  // descendants and listed ancestors); every ancestor of a GPU process
  // counts too. Its members are not read again while they are members.
  void set_jobs(const std::vector<uint32_t>& gpu_pids,
                const std::vector<ProcessSample>& job_processes);

  // The busiest processes at the last reading (at least kMinCpuPct, at most
  // kOtherCpuTopMax, busiest first) outside every GPU job as set_jobs last
  // said, descendants of a GPU process it did not list included. nullopt
  // before two readings.
  std::optional<std::vector<OtherCpuProcess>> top();

  // The processes top() would rank at the last reading (at least
  // kMinCpuPct, outside the jobs), with their ancestors and descendants as
  // this scan and set_jobs know them, sorted: the only processes whose
  // turning out to be in a GPU job (a holder of a dead GPU process's CUDA
  // files, say) could change top(). Empty when none is busy.
  std::vector<uint32_t> busy_families() const;

  // Processes listed, stat files and CPU clocks read by the last read(),
  // and pids probed in place of a listing.
  struct ReadCounts {
    size_t listed = 0, stat_reads = 0, clock_reads = 0, probed = 0;
  };
  ReadCounts last_read_counts() const { return counts_; }

  // A process's CPU time in nanoseconds (all its threads), or nullopt. The
  // kernel's CPU clock of the process is read where proc_root's pids are
  // this process's own (not a fixture tree, not another pid namespace's
  // /proc); a test gives a fixture's processes one here.
  using CpuClock = procfs::CpuClock;
  void set_cpu_clock(CpuClock clock) { cpu_clock_ = std::move(clock); }

  // Whether a pid names a process (a thread group's leader) now. On this
  // machine's own /proc it is asked of the kernel (pidfd_open); a test
  // gives a fixture's. Without one, every listing lists /proc.
  enum class PidKind { kProcess, kNotProcess, kUnknown };
  using PidProbe = std::function<PidKind(uint32_t pid)>;
  void set_pid_probe(PidProbe probe) { pid_probe_ = std::move(probe); }
  // The kernel's answer for a pid of this process's own namespace.
  static PidKind probe_own_pid(uint32_t pid);

  static constexpr uint32_t kSlices = 16;
  // A listing probes the pids allocated since the last one when there are
  // at most this many, or half as many as the known processes if more.
  static constexpr uint64_t kProbeMin = 64;
  // A process whose pid was taken just before a listing read the last pid
  // but that was not yet in /proc when listed is found by the next full
  // listing: at least every this many listings.
  static constexpr uint32_t kFullListingEvery = 8;
  // A re-read this soon after a process's stat takes its CPU clock alone:
  // its parent, name and start time are kept from the stat. The pid cannot
  // have been reused meanwhile (the kernel hands out pids in turn up to
  // pid_max before it wraps), and a clock that went back sends it to stat.
  static constexpr double kClockOnlySeconds = 0.5;
  // The first two readings list /proc, then every kListEvery-th.
  static constexpr uint64_t kListEvery = 4;
  static constexpr size_t kHotMax = 2 * kOtherCpuTopMax;
  // Under 1% of a CPU is not "busy": a sleeping daemon's wake-ups.
  static constexpr double kMinCpuPct = 1.0;
  // A kernel thread's comm can be 63 bytes ("kworker/u64:2-events_unbound");
  // a fixture's is anything.
  static constexpr size_t kCommMax = 64;

 private:
  struct Entry {
    KeptFile stat_file;      // open while hot or without a CPU% yet
    uint64_t starttime = 0;  // clock ticks after boot: the process's identity
    uint64_t ticks = 0;      // utime + stime at the last reading
    // Whether `ticks` is of the last reading (not a clock-only one, after).
    bool ticks_current = true;
    // The CPU clock at the last reading (nanoseconds), where there is one.
    // stat's ticks are 10 ms, a fifth to a third of a one-shot command's
    // window: `yes` read as 57-94% from them.
    std::optional<uint64_t> cpu_ns;
    double at = 0;  // when
    uint32_t ppid = 0;
    std::string comm;
    std::optional<double> cpu_pct;
    uint64_t listed_round = 0;  // 0: gone (its stat could not be read)
    bool job = false;  // inside a GPU job (set_jobs, or found by top())
    bool hot = false;  // one of the kHotMax busiest at the last top()
    // user and container: read once, for a process about to be listed.
    bool described = false;
    std::string user;
    std::optional<std::string> container;
  };

  // At a listing: the pids allocated since the last one that name
  // processes (probed_); false when /proc must be listed instead.
  bool probe_new_pids(uint64_t pid_now);
  void read_one(uint32_t pid, Entry& e, bool fresh, double now,
                std::optional<uint64_t> btime);
  // A re-read within kClockOnlySeconds of a known process's stat, from its
  // CPU clock alone; false when it must read stat (no clock, gone, too old).
  bool read_clock_only(uint32_t pid, Entry& e, double now);
  void describe(uint32_t pid, Entry& e);
  static void forget_rate(Entry& e);  // marks `e` a job member
  // The recorded parent of `pid`: the process table's, else this scan's.
  std::optional<uint32_t> parent(uint32_t pid) const;
  bool is_gpu_pid(uint32_t pid) const;
  // A GPU process or a descendant of one.
  bool in_gpu_job(uint32_t pid) const;
  const char* pid_path(uint32_t pid, const char* file);

  // /proc/loadavg's last pid now, when it counts pids of proc_root_'s
  // namespace (as ProcessTable does); nullopt when unknown.
  std::optional<uint64_t> last_pid();

  std::string proc_root_;
  long clk_tck_;
  CpuClock cpu_clock_;     // empty: stat's ticks alone
  PidProbe pid_probe_;     // empty: every listing lists /proc
  uint32_t self_pid_ = 0;  // this process, on its own /proc; never listed
  bool last_pid_usable_ = false;
  // The last pid at the last listing: a listing finds no new process while
  // no pid was allocated since, so the known ones stand in for it.
  std::optional<uint64_t> listed_at_pid_;
  double listed_at_ = 0;  // when (Unix seconds)
  uint64_t round_ = 0, listings_ = 0;
  uint32_t listings_since_full_ = 0;  // probed listings since a full one
  ReadCounts counts_;
  std::unordered_map<uint32_t, Entry> cache_;
  std::unordered_map<uint32_t, std::string> user_names_;
  // Reused between calls.
  std::string path_, buf_;
  std::vector<std::pair<double, uint32_t>> ranked_;  // (cpu_pct, pid)
  std::vector<uint32_t> probed_;  // new processes found by probe_new_pids
  // From set_jobs: the GPU pids, and (pid, ppid) of the table's processes;
  // both sorted.
  std::vector<uint32_t> gpu_pids_;
  std::vector<std::pair<uint32_t, uint32_t>> job_links_;
};

}  // namespace gd::procfs
