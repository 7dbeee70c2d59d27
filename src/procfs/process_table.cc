#include "procfs/process_table.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <system_error>
#include <thread>
#include <utility>

#include "common/user_name.h"
#include "model/process_tree.h"
#include "procfs/loadavg.h"
#include "procfs/pid_listing.h"
#include "procfs/process_files.h"
#include "procfs/text_util.h"

namespace gd::procfs {

namespace {

void append_uint(std::string& s, uint32_t v) {
  char tmp[16];
  auto [end, ec] = std::to_chars(tmp, tmp + sizeof tmp, v);
  (void)ec;
  s.append(tmp, end);
}

// In the scan fallback the parent pid of every process is cached; a pid that
// dies and is reused between two samples would keep a stale parent, so each
// sample also re-reads 1/kRescanSlices of the cached pids (every pid at least
// once per kRescanSlices samples). Reparenting itself needs no re-read: it
// only ever moves a process to an ancestor, which cannot turn a
// non-descendant of a GPU process into a descendant.

constexpr auto kShortRead = Ending::kShortRead;

}  // namespace

ProcessTable::ProcessTable(std::string proc_root)
    : proc_root_(std::move(proc_root)),
      clk_tck_(sysconf(_SC_CLK_TCK)),
      page_size_(sysconf(_SC_PAGESIZE)) {
  if (clk_tck_ <= 0) clk_tck_ = 100;
  if (page_size_ <= 0) page_size_ = 4096;
  // The kernel counts loadavg's last pid in the reader's pid namespace, not
  // the mount's: a procfs of another namespace (--proc-root /host/proc in a
  // container) must not be trusted with it. Its "self" names this process
  // by its pid there; a fixture tree's is a plain directory.
  const std::optional<bool> own_pids = proc_pids_are_own(proc_root_);
  last_pid_usable_ = own_pids.value_or(true);
  // (Without a clock, schedstat: a sandbox that refuses CPU clocks gets no
  // stat read at every check.)
  cpu_clock_ = own_cpu_clock(own_pids.value_or(false));
}

const char* ProcessTable::pid_path(uint32_t pid, const char* file) {
  path_.assign(proc_root_);
  path_ += '/';
  append_uint(path_, pid);
  if (file[0]) {
    path_ += '/';
    path_ += file;
  }
  return path_.c_str();
}

const char* ProcessTable::path_unless_kept(uint32_t pid, const char* file,
                                           const KeptFile& f) {
  return f.pins_process() ? "" : pid_path(pid, file);
}

const char* ProcessTable::tid_path(uint32_t pid, uint32_t tid,
                                   const char* file) {
  pid_path(pid, "task");
  path_ += '/';
  append_uint(path_, tid);
  path_ += '/';
  path_ += file;
  return path_.c_str();
}

void ProcessTable::decide_discovery(const std::vector<uint32_t>& gpu_pids) {
  for (uint32_t pid : gpu_pids) {
    if (access(pid_path(pid, "task"), F_OK) != 0) continue;  // not running
    discovery_ = access(tid_path(pid, pid, "children"), F_OK) == 0
                     ? Discovery::kChildrenFiles
                     : Discovery::kStatScan;
    return;
  }
}

void ProcessTable::thread_children_from_files(uint32_t pid,
                                              std::vector<uint32_t>& out) {
  // A child is listed under the thread that forked it, so every thread's
  // file is read; the main thread's is read on its own (children_of).
  DIR* dir = opendir(pid_path(pid, "task"));
  if (!dir) return;
  scratch_.clear();
  while (dirent* e = readdir(dir)) {
    if (auto tid = pid_of_entry(e->d_name); tid && *tid != pid)
      scratch_.push_back(*tid);
  }
  closedir(dir);
  for (uint32_t tid : scratch_) {
    ++counts_.children_reads;
    if (read_file(tid_path(pid, tid, "children"), buf_, Ending::kShortPidList))
      parse_pid_list(buf_, out);
  }
}

void ProcessTable::rescan_parents() {
  ++scan_round_;
  bool listed = for_each_pid(proc_root_, [&](uint32_t pid) {
    auto [it, fresh] = parent_of_.try_emplace(pid);
    if (fresh || pid % kRescanSlices == scan_round_ % kRescanSlices) {
      // Only the ppid is wanted; it sits right after the comm.
      if (read_file(pid_path(pid, "stat"), buf_)) {
        if (auto st = parse_pid_stat(buf_)) it->second.ppid = st->ppid;
      }
    }
    it->second.round = scan_round_;
  });
  if (!listed) return;
  std::erase_if(parent_of_,
                [&](const auto& kv) { return kv.second.round != scan_round_; });
  edges_.clear();
  for (const auto& [pid, entry] : parent_of_)
    edges_.emplace_back(entry.ppid, pid);
  std::sort(edges_.begin(), edges_.end());
}

const std::string& ProcessTable::user_name(uint32_t uid) {
  auto it = user_names_.find(uid);
  if (it != user_names_.end()) return it->second;
  return user_names_.emplace(uid, user_name_of(uid)).first->second;
}

void ProcessTable::read_static_facts(const std::string& proc_root, uint32_t pid,
                                     StaticFacts& f, std::string& path,
                                     std::string& buf) {
  auto at = [&](const char* file) {
    path.assign(proc_root);
    path += '/';
    append_uint(path, pid);
    path += '/';
    path += file;
    return path.c_str();
  };
  f.status_read = read_file(at("status"), buf);
  if (f.status_read) {
    f.uid = parse_status_euid(buf);
    f.ns_pid = parse_status_ns_pid(buf);
  }
  // Capped where read: a 1 MiB command line costs 4 KiB from here on.
  f.cmdline = read_cmdline(at("cmdline")).value_or("");
  f.cgroup = read_cgroup(at("cgroup"), &f.slurm_job_id);
  // The environment only where the cgroup does not tell (a node whose Slurm
  // does not track jobs by cgroup), and with the other static facts: every
  // kStaticRefreshSeconds at most, never for every process every sample.
  if (!f.slurm_job_id) f.slurm_job_id = read_environ_slurm_job(at("environ"));
  // maps is only readable with ptrace access (same user or CAP_SYS_PTRACE);
  // unreadable means "no libs known", the list stays empty.
  if (!f.with_libs) return;
  f.libs = read_file(at("maps"), buf) ? parse_maps_cuda_libs(buf)
                                      : std::vector<std::string>{};
}

void ProcessTable::apply_static(StaticFacts& f, Cached& c) {
  if (f.status_read) {
    if (f.uid) c.user = user_name(*f.uid);
    c.ns_pid = f.ns_pid;
  }
  c.cmdline = std::move(f.cmdline);
  c.cgroup = std::move(f.cgroup);
  c.slurm_job_id = std::move(f.slurm_job_id);
  if (f.with_libs) c.libs = std::move(f.libs);
}

void ProcessTable::read_static(uint32_t pid, Cached& c, double now,
                               bool with_libs) {
  c.static_read_at = now;
  c.ran_since_static = false;
  StaticFacts f;
  f.slurm_job_id = c.slurm_job_id;
  f.with_libs = with_libs;
  read_static_facts(proc_root_, pid, f, path_, buf_);
  apply_static(f, c);
}

void ProcessTable::read_put_off(std::vector<ProcessSample>& out) {
  if (put_off_.empty()) return;
  const unsigned threads = put_off_.size() < kParallelStaticMin
                               ? 1
                               : std::clamp(std::thread::hardware_concurrency(),
                                            1u, kStaticThreadsMax);
  if (threads == 1) {
    for (PutOff& j : put_off_)
      read_static_facts(proc_root_, j.pid, j.facts, path_, buf_);
  } else {
    // The threads take the next job until none is left; the files are the
    // kernel's work, which runs on as many cores as there are threads. A
    // thread that cannot start leaves its share to the others.
    std::atomic<size_t> next{0};
    auto run = [this, &next] {
      std::string path, buf;
      for (size_t i; (i = next.fetch_add(1)) < put_off_.size();) {
        try {
          read_static_facts(proc_root_, put_off_[i].pid, put_off_[i].facts,
                            path, buf);
        } catch (const std::exception&) {
          put_off_[i].facts = StaticFacts{};  // as if unreadable
        }
      }
    };
    std::vector<std::thread> pool;
    try {
      for (unsigned t = 1; t < threads; ++t) pool.emplace_back(run);
    } catch (const std::system_error&) {
    }
    run();
    for (std::thread& t : pool) t.join();
  }
  for (PutOff& j : put_off_) {
    auto it = cache_.find(j.pid);
    if (it == cache_.end() || j.index >= out.size() ||
        out[j.index].pid != j.pid)
      continue;
    Cached& c = it->second;
    apply_static(j.facts, c);
    ProcessSample& p = out[j.index];
    p.user = c.user;
    p.cmdline = c.cmdline;
    p.cgroup = c.cgroup;
    p.ns_pid = c.ns_pid;
    p.slurm_job_id = c.slurm_job_id;
    p.libs = c.libs;
  }
  put_off_.clear();
}

ProcessTable::StatNeed ProcessTable::stat_need(uint32_t pid, Cached& c,
                                               bool is_root, bool fresh,
                                               double now_s) {
  c.sched_this_sample = false;
  bool slice = pid % kRescanSlices == scan_round_ % kRescanSlices;
  // The run time from the process's CPU clock, which counts every thread;
  // without a last pid this sample, from schedstat, as where there is no
  // clock.
  const bool by_clock = cpu_clock_ && last_pid_;
  if (is_root || (!fresh && c.stat.num_threads > 1 && !by_clock)) {
    // schedstat covers the main thread only: another thread may have run.
    c.sched.reset();
    c.sched_before.reset();
    c.schedstat_file.close();
    c.quiet_checks = 0;
    c.ran_at_last_check = false;
    c.ran_since_static = c.ran_since_full = true;
    return fresh || slice ? StatNeed::kFullRead : StatNeed::kRead;
  }
  // Both readings must still be of the process stat was opened for: equal
  // counters of two different processes prove nothing. A CPU clock is read
  // by pid: no wrap of the pid counter since stat was read through its kept
  // descriptor says the pid is still that process's.
  bool pinned = !fresh && c.sched && c.stat_file.pins_process() &&
                (by_clock ? c.wraps_at_pin == pid_wraps_
                          : c.schedstat_file.pins_process());
  // A process that has not run since its last full read cannot have forked;
  // only its RSS can have moved (page reclaim): every 4th turn will do.
  bool full_due =
      fresh ||
      (slice && (c.ran_since_full || (scan_round_ / kRescanSlices) % 4 == 0));
  if (pinned && !full_due && !c.ran_at_last_check) {
    // One that slept at its last check is checked every `every` samples.
    uint32_t every = c.quiet_checks >= kLongAsleepChecks ? 4
                     : c.quiet_checks >= kAsleepChecks   ? 2
                                                         : 1;
    if ((scan_round_ + pid) % every != 0) return StatNeed::kUnchecked;
  }
  if (pinned && !full_due && c.ran_at_last_check && c.light_checks >= 2 &&
      (scan_round_ + pid) % 2 != 0)
    return StatNeed::kLightSkip;
  std::optional<SchedStat> now;
  if (by_clock) {
    // The run time alone: what moves whenever the process runs.
    if (std::optional<uint64_t> ns = cpu_clock_(pid)) now = SchedStat{*ns};
    ++counts_.clock_reads;
  } else {
    if (c.schedstat_file.read(
            path_unless_kept(pid, "schedstat", c.schedstat_file), buf_,
            kShortRead))
      now = parse_schedstat(buf_);
    ++counts_.schedstat_reads;
  }
  const bool was_running = pinned && c.ran_at_last_check;
  bool asleep = pinned && now && *now == *c.sched;
  c.quiet_checks = asleep ? c.quiet_checks + 1 : 0;
  c.ran_at_last_check =
      pinned && now && !asleep;  // unknown (first check) counts as not
  if (!asleep) c.ran_since_static = c.ran_since_full = true;
  // Taken before the stat read that may follow, so a run between the two
  // shows up as a change next time rather than being missed.
  c.sched_before = c.sched;
  c.sched_before_at = c.sched_at;
  c.sched = now;
  c.sched_at = now_s;
  c.sched_this_sample = now.has_value();
  if (full_due) return StatNeed::kFullRead;
  // Gone (the kept file no longer reads): the stat read finds out.
  if (!now) return StatNeed::kRead;
  // Stopped running since the last check: its state (asleep, or exited and
  // a zombie) is read once.
  if (asleep) return was_running ? StatNeed::kRead : StatNeed::kQuiet;
  // A running worker's stat waits for its full read (every kRescanSlices
  // samples, full_due above).
  return was_running ? StatNeed::kSchedOnly : StatNeed::kRead;
}

bool ProcessTable::read_stat(uint32_t pid, Cached& c, bool& fresh) {
  bool pinned = c.stat_file.pins_process();
  if (!c.stat_file.read(path_unless_kept(pid, "stat", c.stat_file), buf_,
                        kShortRead)) {
    if (!pinned) return false;
    // The process the descriptor pinned is gone; its pid may already belong
    // to another process, which is read afresh.
    c = Cached{};
    fresh = true;
    if (!c.stat_file.read(pid_path(pid, "stat"), buf_, kShortRead))
      return false;
  }
  auto st = parse_pid_stat(buf_);
  if (!st) return false;
  if (!fresh && c.stat.starttime != st->starttime) {
    // pid reused, seen where files are not kept open
    Cached reset;
    reset.stat_file = std::move(c.stat_file);
    c = std::move(reset);
    fresh = true;
  }
  // Read through a descriptor that pins the process: its pid is its own
  // from here until the pid counter next wraps.
  if (c.stat_file.pins_process()) c.wraps_at_pin = pid_wraps_;
  c.comm_changed = !fresh && c.stat.comm != st->comm;
  c.stat = std::move(*st);
  ++counts_.stat_reads;
  return true;
}

void ProcessTable::children_of(uint32_t pid, bool is_root, Cached& c,
                               bool full_read, std::vector<uint32_t>& out) {
  if (discovery_ == Discovery::kStatScan) {
    auto lo =
        std::lower_bound(edges_.begin(), edges_.end(), std::make_pair(pid, 0u));
    for (auto it = lo; it != edges_.end() && it->first == pid; ++it)
      out.push_back(it->second);
    return;
  }
  if (discovery_ != Discovery::kChildrenFiles) return;
  // A GPU process's main thread's children are re-read every sample: they
  // are its data-loader workers, which PyTorch forks from the main thread
  // and respawns every epoch. Everything else is re-read at full reads; in
  // between the cached lists are used. Reading every thread's file of
  // hundreds of processes each second was most of the cost of a sample.
  // A child that exits is dropped through its own files; a new one needs a
  // fork, which allocates a pid: when none was allocated since the list was
  // read (the reading of a root's 61 workers walks its children list once
  // per entry), the list stands.
  bool no_fork_since = last_pid_ && c.main_children_at_pid == last_pid_;
  if (full_read || (is_root && !no_fork_since)) {
    c.main_children.clear();
    c.main_children_at_pid = last_pid_;
    const char* path = tid_path(pid, pid, "children");
    ++counts_.children_reads;
    if (is_root ? c.children_file.read(path, buf_, Ending::kShortPidList)
                : read_file(path, buf_, Ending::kShortPidList))
      parse_pid_list(buf_, c.main_children);
  }
  if (full_read) {
    c.thread_children.clear();
    if (c.stat.num_threads > 1)
      thread_children_from_files(pid, c.thread_children);
  }
  out.insert(out.end(), c.main_children.begin(), c.main_children.end());
  out.insert(out.end(), c.thread_children.begin(), c.thread_children.end());
}

std::optional<double> ProcessTable::cpu_from_schedstat(const Cached& c) {
  if (!c.sched_this_sample || !c.sched || !c.sched_before) return std::nullopt;
  const double dt = c.sched_at - c.sched_before_at;
  if (!(dt > 0) || c.sched->run_ns < c.sched_before->run_ns)
    return std::nullopt;
  return 100.0 * static_cast<double>(c.sched->run_ns - c.sched_before->run_ns) /
         1e9 / dt;
}

std::optional<double> ProcessTable::cpu_since_last_read(Cached& c, bool fresh,
                                                        double now) {
  std::optional<double> pct;
  uint64_t ticks = c.stat.utime + c.stat.stime;
  if (!fresh && now > c.prev_now && ticks >= c.prev_ticks) {
    double cpu_s = static_cast<double>(ticks - c.prev_ticks) /
                   static_cast<double>(clk_tck_);
    pct = 100.0 * cpu_s / (now - c.prev_now);
  }
  c.prev_ticks = ticks;
  c.prev_now = now;
  return pct;
}

void ProcessTable::describe(const Cached& c, std::optional<uint64_t> btime,
                            ProcessSample& p) const {
  const PidStat& st = c.stat;
  p.ppid = st.ppid;
  p.user = c.user;
  p.name = st.comm;
  p.cmdline = c.cmdline;
  p.state = std::string(1, st.state);
  p.threads = st.num_threads;
  p.rss_bytes = st.rss_pages * static_cast<uint64_t>(page_size_);
  p.cgroup = c.cgroup;
  p.ns_pid = c.ns_pid;
  p.slurm_job_id = c.slurm_job_id;
  if (btime)
    p.start_time =
        static_cast<double>(*btime) +
        static_cast<double>(st.starttime) / static_cast<double>(clk_tck_);
}

void ProcessTable::list_job_ancestors(const std::vector<uint32_t>& gpu_pids,
                                      double now, std::optional<uint64_t> btime,
                                      std::vector<ProcessSample>& out) {
  // (GPU pid, its parent) of the GPU processes found in /proc; taken first
  // because `out` grows below.
  std::vector<std::pair<uint32_t, uint32_t>> starts;
  for (const ProcessSample& p : out)
    if (p.ppid &&
        std::find(gpu_pids.begin(), gpu_pids.end(), p.pid) != gpu_pids.end())
      starts.emplace_back(p.pid, *p.ppid);
  for (auto [gpu_pid, ppid] : starts) {
    uint32_t child = gpu_pid;
    // Init is left out: an unlisted parent 1 already groups nothing.
    for (size_t depth = 0; depth < kMaxJobAncestors && ppid > 1; ++depth) {
      auto [it, fresh] = cache_.try_emplace(ppid);
      Cached& c = it->second;
      if (c.listed_round == scan_round_) break;  // listed already
      // Read whole every sample, without keeping the file open or counting
      // it in last_read_counts (which measure the descendants' economy):
      // there are a few ancestors per job.
      if (!read_file(pid_path(ppid, "stat"), buf_, kShortRead)) {
        if (fresh) cache_.erase(it);
        break;
      }
      auto st = parse_pid_stat(buf_);
      if (!st) {
        if (fresh) cache_.erase(it);
        break;
      }
      if (!fresh && c.stat.starttime != st->starttime) {
        c = Cached{};  // pid reused
        fresh = true;
      }
      c.stat = std::move(*st);
      double static_age = now - c.static_read_at;
      if (fresh || static_age < 0 ||
          static_age >= kStaticRefreshSeconds + ppid % kRescanSlices)
        read_static(ppid, c, now, /*with_libs=*/false);
      ProcessSample p;
      p.pid = ppid;
      p.cpu_pct = cpu_since_last_read(c, fresh, now);
      describe(c, btime, p);
      c.listed_round = scan_round_;
      bool last = ends_job_ancestry(ppid, p.name, p.cmdline);
      child = ppid;
      ppid = c.stat.ppid;
      out.push_back(std::move(p));
      if (last || ppid == child) break;
    }
  }
}

std::vector<ProcessSample> ProcessTable::processes(
    const std::vector<uint32_t>& gpu_pids, double now,
    std::optional<uint64_t> btime, std::vector<ProcessSample> storage) {
  if (discovery_ == Discovery::kUndecided) decide_discovery(gpu_pids);
  put_off_.clear();  // left by a call that did not finish
  last_pid_.reset();
  if (last_pid_source_) {
    last_pid_ = last_pid_source_();
  } else if (last_pid_usable_) {
    path_.assign(proc_root_).append("/loadavg");
    if (read_file(path_.c_str(), buf_, kShortRead))
      last_pid_ = parse_loadavg_last_pid(buf_);
  }
  // A last pid that went back, or is not known, may have come round to a
  // cached pid: the CPU clocks read by pid are not trusted until each
  // process's stat is read through its kept descriptor again.
  if (!last_pid_ || (previous_last_pid_ && *last_pid_ < *previous_last_pid_))
    ++pid_wraps_;
  previous_last_pid_ = last_pid_;
  if (discovery_ == Discovery::kStatScan)
    rescan_parents();  // advances scan_round_
  else
    ++scan_round_;

  std::vector<ProcessSample> out = std::move(storage);
  out.clear();
  out.reserve(cache_.size() + gpu_pids.size());
  // Breadth-first from the GPU processes; (pid, expected parent) pairs, the
  // parent check drops a cached child pid that was reused by another process.
  std::vector<std::pair<uint32_t, uint32_t>>& queue = queue_;
  queue.clear();
  for (uint32_t pid : gpu_pids) queue.emplace_back(pid, 0);
  std::vector<uint32_t>& children = children_;
  counts_ = {};
  for (size_t qi = 0; qi < queue.size(); ++qi) {
    auto [pid, parent] = queue[qi];
    bool is_root = parent == 0;
    auto [it, fresh] = cache_.try_emplace(pid);
    Cached& c = it->second;
    if (c.listed_round == scan_round_) continue;  // reached twice
    ProcessSample p;
    p.pid = pid;
    StatNeed need = stat_need(pid, c, is_root, fresh, now);
    bool ok = need == StatNeed::kQuiet || need == StatNeed::kUnchecked ||
              need == StatNeed::kSchedOnly || need == StatNeed::kLightSkip ||
              read_stat(pid, c, fresh);
    bool full_read = need == StatNeed::kFullRead ||
                     fresh;  // read_stat may find a new process
    if (!ok || (!is_root && c.stat.ppid != parent)) {
      // A descendant that exited since it was found is simply gone (its
      // cache entry goes at the end); a GPU process that is gone from /proc
      // is what the user must hear about.
      if (!is_root) continue;
      p.state = "missing";
      c.listed_round = scan_round_;
      out.push_back(std::move(p));
      continue;
    }
    if (need == StatNeed::kQuiet) ++counts_.quiet_skips;
    if (need == StatNeed::kUnchecked) ++counts_.unchecked;
    if (need == StatNeed::kSchedOnly) ++counts_.sched_only;
    if (need == StatNeed::kLightSkip) ++counts_.light_skips;
    const PidStat& st = c.stat;
    if (discovery_ == Discovery::kStatScan) parent_of_[pid].ppid = st.ppid;
    double static_age = now - c.static_read_at;
    double refresh_s =
        is_root ? kStaticRefreshSeconds : kDescendantStaticRefreshSeconds;
    bool renamed = std::exchange(c.comm_changed, false);  // exec'd, or not
    bool static_read = false;
    if (fresh || static_age < 0 || renamed ||
        (c.ran_since_static && static_age >= refresh_s + pid % kRescanSlices)) {
      // A worker's libraries change with an exec (renamed) or a dlopen; one
      // that dlopens CUDA to use a GPU becomes a GPU process and is re-read
      // as one. maps is the costly file: hundreds of KB in a CUDA process.
      const bool with_libs = is_root || fresh || renamed;
      if (fresh && !is_root) {
        // Nothing of the walk needs them: read after it (read_put_off).
        c.static_read_at = now;
        c.ran_since_static = false;
        PutOff& j = put_off_.emplace_back();
        j.pid = pid;
        j.index = out.size();
        j.facts.with_libs = with_libs;
      } else {
        read_static(pid, c, now, with_libs);
      }
      static_read = true;
    }
    // Only GPU processes: a statvfs through their root is cheap, but not
    // for every descendant every 30 s.
    if (is_root && (static_read || !c.dev_shm_read)) {
      c.dev_shm_bytes = filesystem_size(pid_path(pid, "root/dev/shm"));
      c.dev_shm_read = true;
    }

    if (need == StatNeed::kUnchecked) {
      // Asleep at its last check. Its CPU time since then, if any, is
      // averaged over the whole gap when it is next read, so the time
      // stays where it was spent rather than piling onto one sample.
      p.cpu_pct = 0;
    } else if (need == StatNeed::kLightSkip) {
      // Its CPU time since the last check is averaged in at the next one.
      p.cpu_pct = c.last_cpu_pct;
    } else {
      // Ticks since the last stat read (kept up to date for when the run
      // time stops being the source); the run time read this sample (the
      // CPU clock's, or a single-threaded process's schedstat) is finer and
      // covers the samples without a stat read.
      std::optional<double> ticks;
      if (need != StatNeed::kSchedOnly)
        ticks = cpu_since_last_read(c, fresh, now);
      auto sched = fresh ? std::nullopt : cpu_from_schedstat(c);
      p.cpu_pct = sched ? sched : ticks;
      c.last_cpu_pct = p.cpu_pct;
      c.light_checks =
          p.cpu_pct && *p.cpu_pct < kLightCpuPct ? c.light_checks + 1 : 0;
    }

    children.clear();
    children_of(pid, is_root, c, full_read, children);
    if (full_read) c.ran_since_full = false;
    for (uint32_t child : children) queue.emplace_back(child, pid);

    describe(c, btime, p);
    p.libs = c.libs;
    if (is_root) p.dev_shm_bytes = c.dev_shm_bytes;
    c.listed_round = scan_round_;
    out.push_back(std::move(p));
  }
  read_put_off(out);
  list_job_ancestors(gpu_pids, now, btime, out);
  std::erase_if(cache_, [&](const auto& kv) {
    return kv.second.listed_round != scan_round_;
  });
  // In pid order. Sorting (pid, index) pairs, then following the cycles of
  // that permutation, moves each sample about once and needs no second
  // vector (500 samples are ~150 KB: a fresh mmap and its page faults).
  order_.clear();
  for (uint32_t i = 0; i < out.size(); ++i) order_.emplace_back(out[i].pid, i);
  std::sort(order_.begin(), order_.end());
  for (uint32_t i = 0; i < order_.size(); ++i) {
    if (order_[i].second == i) continue;
    ProcessSample held = std::move(out[i]);
    uint32_t at = i;
    for (;;) {
      const uint32_t from = order_[at].second;
      order_[at].second = at;  // placed
      if (from == i) {
        out[at] = std::move(held);
        break;
      }
      out[at] = std::move(out[from]);
      at = from;
    }
  }
  return out;
}

}  // namespace gd::procfs
