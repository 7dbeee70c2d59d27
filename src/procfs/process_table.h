// The process part of a sample: GPU processes, all their descendants and
// their ancestors up to the launcher or shell that started them, read from
// /proc/<pid>/ with per-process caching so that a sample of a busy host
// stays cheap.
//
// What a sample reads, per process (the kernel generating /proc/PID/stat is
// most of the cost of a sample):
//  - GPU processes: stat every sample; their main thread's children every
//    sample in which a pid was allocated since the last read (the last pid
//    of /proc/loadavg moved): a process cannot gain a child without one.
//  - Their ancestors (launcher, shell): stat every sample, no children.
//  - Single-threaded descendants (data-loader workers): their run time, from
//    the process's CPU clock on this machine's own /proc (one system call)
//    or else from schedstat (a third of the cost of stat); stat only when
//    that shows the process ran since its stat was last read. A process
//    that has not run cannot have changed state, CPU time, threads or
//    children; two things can still move without it: RSS (page reclaim)
//    and S -> R on a wake-up not yet scheduled. A process found asleep
//    kAsleepChecks times in a row is checked every 2nd sample,
//    kLongAsleepChecks times every 4th: one that wakes after a long sleep is
//    seen up to 3 samples late (its CPU time then averaged over the gap). One
//    found running at its last check keeps having its run time read every
//    sample, and its CPU% comes from there (the main thread's schedstat is the
//    whole process's when it has one thread); its stat (state, threads, RSS,
//    parent) is read at its full read, every kActiveStatEvery (= kRescanSlices)
//    samples, and once more when it stops running (so an exit shows as a zombie
//    at the next sample). On a busy training node, where every worker wakes
//    many times a second, this is what keeps a sample cheap: a clock (or
//    schedstat) read per worker instead of a stat read.
//    A running worker that used under kLightCpuPct of a core over each of
//    its last two readings (one that wakes briefly to top up a queue; one
//    reading could be a busy worker's exit) has its run time read every
//    2nd sample, its CPU% averaged over the two; in between the
//    last value stands. One that gets busier is read every sample again
//    from its next check. Its exit shows up to one sample later.
//    Every process's stat is re-read at least every kRescanSlices samples
//    regardless.
//  - Multi-threaded descendants: with a CPU clock (every thread's run time)
//    as single-threaded ones; from schedstat (the main thread's alone),
//    stat every sample.
//  - Children of every thread, every kRescanSlices samples per process
//    that has run since its last such read (every 4 x kRescanSlices for
//    one that has not: it cannot have forked, but its RSS may have shrunk).
// stat, schedstat and the GPU processes' children files stay open between
// samples (KeptFile), which also pins each cached pid to its process. A CPU
// clock is read by pid, not through a descriptor: it is trusted to be the
// pinned process's while /proc/loadavg's last pid has not gone back since
// the process's stat was last read through its kept descriptor (a pid is
// handed out again only after the kernel's pid counter wraps at pid_max);
// after a wrap each such process has its stat read once more.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/sample.h"
#include "procfs/kept_file.h"
#include "procfs/process_files.h"

namespace gd::procfs {

class ProcessTable {
 public:
  // How long user, cmdline, cgroup and libs are trusted before re-reading
  // them (maps of a CUDA process is hundreds of KB: the costly file). Each
  // process waits up to kRescanSlices seconds more, by pid, so that
  // processes found together are not all re-read in one sample; one that
  // has not run since (schedstat) is not re-read at all: it cannot have
  // exec'd, mapped a library or changed its uid.
  static constexpr double kStaticRefreshSeconds = 30;
  // The same for descendants (data-loader workers, hundreds per node):
  // they are forks of their GPU process that rarely exec, and an exec or a
  // rename (setproctitle) changes the comm in their stat, which makes them
  // re-read at once. Their libs (maps) are read only then and when first
  // seen.
  static constexpr double kDescendantStaticRefreshSeconds = 300;

  explicit ProcessTable(std::string proc_root);

  // btime: boot time (Unix seconds) for start_time; nullopt leaves it unset.
  // storage: a spent list whose memory the result reuses (its contents are
  // dropped), so that a view sampling each second does not map fresh pages
  // for its hundreds of processes every time.
  std::vector<ProcessSample> processes(const std::vector<uint32_t>& gpu_pids,
                                       double now,
                                       std::optional<uint64_t> btime,
                                       std::vector<ProcessSample> storage = {});

  // How descendants are found. Children files (CONFIG_PROC_CHILDREN) are
  // used when the kernel has them; otherwise all <proc>/<pid>/stat are
  // scanned for parent pids, with the parent pid cached per pid.
  enum class Discovery { kUndecided, kChildrenFiles, kStatScan };
  Discovery discovery() const { return discovery_; }
  size_t cached_process_count() const { return cache_.size(); }

  // What the last call read: processes whose stat was read, and processes
  // whose schedstat showed they had not run (their cached stat was used),
  // long-asleep processes not checked at all in that call, and running
  // workers whose schedstat alone was read (their CPU time from it, the
  // rest from their cached stat).
  struct ReadCounts {
    size_t stat_reads = 0, quiet_skips = 0, unchecked = 0, sched_only = 0;
    // Run times read from CPU clocks and from schedstat files.
    size_t clock_reads = 0, schedstat_reads = 0;
    // Lightly running workers not checked in this call (kLightCpuPct).
    size_t light_skips = 0;
    // Children files read (main threads' and other threads').
    size_t children_reads = 0;
  };
  ReadCounts last_read_counts() const { return counts_; }

  // A process's CPU time in nanoseconds (all its threads), or nullopt. On
  // this machine's own /proc the kernel's CPU clock (own_process_cpu_ns);
  // empty (schedstat files) for a fixture tree or another pid namespace's
  // /proc, and where a test sets it so.
  using CpuClock = procfs::CpuClock;
  void set_cpu_clock(CpuClock clock) { cpu_clock_ = std::move(clock); }
  // /proc/loadavg's last pid, read at each sample; a test gives its own
  // (one that goes back is a wrap of the kernel's pid counter).
  using LastPid = std::function<std::optional<uint64_t>()>;
  void set_last_pid_source(LastPid source) {
    last_pid_source_ = std::move(source);
  }

  // Ancestors listed per GPU process: rank -> elastic agent -> launcher
  // -> shell is as deep as real jobs go.
  static constexpr size_t kMaxJobAncestors = 8;

  // Processes are read in full at least once per this many samples.
  static constexpr uint32_t kRescanSlices = 16;
  static constexpr uint32_t kAsleepChecks = 4, kLongAsleepChecks = 8;
  // A running worker's stat is read every this many samples: at its full
  // read (by pid, so not all in one sample).
  static constexpr uint32_t kActiveStatEvery = kRescanSlices;
  // Below this CPU% (of one core) a running worker is checked every 2nd
  // sample: 500 such workers, the common case of a training node whose GPU
  // is the bottleneck, cost half the reads. Busier ones, where the CPU%
  // matters (an input-bound job), are read every sample.
  static constexpr double kLightCpuPct = 1.0;
  // New processes whose static facts (user, command line, cgroup, libs)
  // one call reads on up to kStaticThreadsMax threads, from this many: the
  // first sample of a node with hundreds of workers.
  static constexpr size_t kParallelStaticMin = 64;
  static constexpr unsigned kStaticThreadsMax = 4;

 private:
  struct Cached {
    KeptFile stat_file, schedstat_file, children_file;
    PidStat stat;                    // as last read
    std::optional<SchedStat> sched;  // as last read (before any stat read)
    double sched_at = 0;             // when
    // The reading before that, and whether `sched` is from this sample:
    // a running worker's CPU% is the run time between the two.
    std::optional<SchedStat> sched_before;
    double sched_before_at = 0;
    bool sched_this_sample = false;
    std::string user, cmdline;
    std::optional<std::string> cgroup;
    std::optional<std::string> slurm_job_id;  // cgroup's, else environ's
    std::vector<std::string> libs;
    std::optional<uint32_t> ns_pid;
    // GPU processes only: the /dev/shm they see, read with the other static
    // facts (it changes only with a remount).
    std::optional<uint64_t> dev_shm_bytes;
    bool dev_shm_read = false;
    // kChildrenFiles, as last read: the main thread's, the other threads'.
    std::vector<uint32_t> main_children, thread_children;
    // last_pid_ when main_children was read.
    std::optional<uint64_t> main_children_at_pid;
    uint32_t quiet_checks = 0;       // run time unchanged, in a row
    bool ran_at_last_check = false;  // run time changed at the last check
    // pid_wraps_ when stat was last read through the kept descriptor: the
    // CPU clock read by pid is this process's while it is still the same.
    uint64_t wraps_at_pin = 0;
    // CPU% as last computed (shown while a light runner is not checked),
    // and how many computations in a row found it under kLightCpuPct.
    std::optional<double> last_cpu_pct;
    uint32_t light_checks = 0;
    bool ran_since_static = true;  // since read_static
    bool comm_changed = false;     // by the last stat read
    bool ran_since_full = true;    // since the last full read
    uint64_t listed_round = 0;     // scan_round_ of the last listing
    double static_read_at = 0;
    uint64_t prev_ticks = 0;
    double prev_now = 0;
  };
  struct ScanEntry {
    uint32_t ppid = 0;
    uint64_t round = 0;
  };

  const char* pid_path(uint32_t pid, const char* file);
  // A kept file does not look at its path: skip building it.
  const char* path_unless_kept(uint32_t pid, const char* file,
                               const KeptFile& f);
  const char* tid_path(uint32_t pid, uint32_t tid, const char* file);
  void decide_discovery(const std::vector<uint32_t>& gpu_pids);
  void thread_children_from_files(uint32_t pid, std::vector<uint32_t>& out);
  void rescan_parents();
  // What this sample reads of a process: its stat and, at a full read, its
  // children of every thread; or nothing, because schedstat shows it has not
  // run since its stat was read (kQuiet), or because it has been asleep a
  // while and this is not one of its check samples (kUnchecked).
  // kSchedOnly: it has run (schedstat moved) and was running at its last
  // check too; its stat is not due, so the cached one stands. kLightSkip:
  // running lightly at its last check, and this is not its check sample.
  enum class StatNeed {
    kFullRead,
    kRead,
    kQuiet,
    kUnchecked,
    kSchedOnly,
    kLightSkip
  };
  StatNeed stat_need(uint32_t pid, Cached& c, bool is_root, bool fresh,
                     double now);
  bool read_stat(uint32_t pid, Cached& c, bool& fresh);
  void children_of(uint32_t pid, bool is_root, Cached& c, bool full_read,
                   std::vector<uint32_t>& out);
  const std::string& user_name(uint32_t uid);
  // user, cmdline, cgroup and (with_libs) the CUDA libraries from maps.
  void read_static(uint32_t pid, Cached& c, double now, bool with_libs = true);
  // What read_static reads, as read from the files: safe to run on another
  // thread (the user is a uid; its name is looked up by apply_static).
  // `slurm_job_id` comes in as the cache has it (the environment is read
  // only where neither it nor the cgroup tells).
  struct StaticFacts {
    bool status_read = false;
    std::optional<uint32_t> uid, ns_pid;
    std::string cmdline;
    std::optional<std::string> cgroup, slurm_job_id;
    bool with_libs = false;
    std::vector<std::string> libs;
  };
  static void read_static_facts(const std::string& proc_root, uint32_t pid,
                                StaticFacts& f, std::string& path,
                                std::string& buf);
  void apply_static(StaticFacts& f, Cached& c);
  // Static reads put off by the walk (a fresh process's, when its user,
  // command line and libraries are not needed to walk on) and read after
  // it, on several threads when there are many: the first sample of a node
  // with hundreds of workers read ~8 files each, one after the other.
  struct PutOff {
    uint32_t pid = 0;
    size_t index = 0;  // in the walk's output
    StaticFacts facts;
  };
  void read_put_off(std::vector<ProcessSample>& out);
  // CPU % since the previous read of `c` (unset on a first read); remembers
  // this read for the next.
  std::optional<double> cpu_since_last_read(Cached& c, bool fresh, double now);
  // CPU % from the last two schedstat readings, for a single-threaded
  // process read this sample; nullopt when there are not two.
  static std::optional<double> cpu_from_schedstat(const Cached& c);
  // Fills `p` from the cached stat and static facts (not libs).
  void describe(const Cached& c, std::optional<uint64_t> btime,
                ProcessSample& p) const;
  // Appends each GPU process's ancestors up to and including the first one
  // that ends_job_ancestry (launcher, job-step daemon, shell...), at most
  // kMaxJobAncestors each, so that consumers can tell which GPU processes
  // form one job (model/process_tree.h). Their libs are not read: they are
  // listed for grouping, and maps is the costly file.
  void list_job_ancestors(const std::vector<uint32_t>& gpu_pids, double now,
                          std::optional<uint64_t> btime,
                          std::vector<ProcessSample>& out);

  std::string proc_root_;
  long clk_tck_;
  long page_size_;
  Discovery discovery_ = Discovery::kUndecided;

  std::unordered_map<uint32_t, Cached> cache_;
  std::unordered_map<uint32_t, ScanEntry> parent_of_;  // kStatScan only
  uint64_t scan_round_ = 0;
  // /proc/loadavg's last pid at this sample, when readable and counted in
  // the pid namespace of proc_root_ (last_pid_usable_).
  std::optional<uint64_t> last_pid_;
  bool last_pid_usable_ = false;
  LastPid last_pid_source_;  // empty: <proc_root>/loadavg
  // Times the last pid went back (or could not be read) between samples:
  // each may have handed a cached pid to another process.
  uint64_t pid_wraps_ = 0;
  std::optional<uint64_t> previous_last_pid_;
  CpuClock cpu_clock_;  // empty: schedstat files
  ReadCounts counts_;
  std::unordered_map<uint32_t, std::string> user_names_;

  std::vector<PutOff> put_off_;

  // Reused between calls to avoid allocations on the hot path.
  std::string path_, buf_;
  std::vector<uint32_t> scratch_;
  std::vector<std::pair<uint32_t, uint32_t>> edges_;  // (ppid, pid)
  std::vector<std::pair<uint32_t, uint32_t>> order_;  // (pid, index in out)
  // The breadth-first walk: (pid, expected parent), and one's children.
  std::vector<std::pair<uint32_t, uint32_t>> queue_;
  std::vector<uint32_t> children_;
};

}  // namespace gd::procfs
