#include "procfs/other_cpu.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <utility>

#include "common/container_ref.h"
#include "common/text_cap.h"
#include "common/user_name.h"
#include "model/process_tree.h"
#include "procfs/loadavg.h"
#include "procfs/pid_listing.h"
#include "procfs/process_files.h"
#include "procfs/text_util.h"

namespace gd::procfs {

namespace {

// A lifetime average over less than this is a tick or two: noise. Such a
// process is read again at the next reading instead.
constexpr double kMinLifetimeSeconds = 0.1;

}  // namespace

OtherCpuScan::OtherCpuScan(std::string proc_root)
    : proc_root_(std::move(proc_root)), clk_tck_(sysconf(_SC_CLK_TCK)) {
  if (clk_tck_ <= 0) clk_tck_ = 100;
  // The kernel counts loadavg's last pid in the reader's pid namespace: a
  // procfs of another one (--proc-root /host/proc) is not trusted with it.
  const std::optional<bool> own_pids = proc_pids_are_own(proc_root_);
  last_pid_usable_ = own_pids.value_or(true);
  cpu_clock_ = own_cpu_clock(own_pids.value_or(false));
  if (own_pids.value_or(false)) {
    pid_probe_ = probe_own_pid;
    self_pid_ = static_cast<uint32_t>(getpid());
  }
}

// pidfd_open(2) (Linux 5.3) refuses a thread that does not lead its group
// (EINVAL; ENOENT on 6.18, measured) and a pid in use by nothing (ESRCH).
// Anything else (ENOSYS on an older kernel or under a filter, EMFILE)
// leaves it unknown.
OtherCpuScan::PidKind OtherCpuScan::probe_own_pid(uint32_t pid) {
  const long fd = syscall(SYS_pidfd_open, static_cast<pid_t>(pid), 0u);
  if (fd >= 0) {
    close(static_cast<int>(fd));
    return PidKind::kProcess;
  }
  return errno == EINVAL || errno == ENOENT || errno == ESRCH
             ? PidKind::kNotProcess
             : PidKind::kUnknown;
}

std::optional<uint64_t> OtherCpuScan::last_pid() {
  if (!last_pid_usable_) return std::nullopt;
  path_.assign(proc_root_).append("/loadavg");
  if (!read_file(path_.c_str(), buf_, Ending::kShortRead)) return std::nullopt;
  return parse_loadavg_last_pid(buf_);
}

const char* OtherCpuScan::pid_path(uint32_t pid, const char* file) {
  path_.assign(proc_root_).push_back('/');
  char tmp[16];
  auto [end, ec] = std::to_chars(tmp, tmp + sizeof tmp, pid);
  (void)ec;
  path_.append(tmp, end).push_back('/');
  path_.append(file);
  return path_.c_str();
}

void OtherCpuScan::read(double now, std::optional<uint64_t> btime) {
  ++round_;
  counts_ = {};
  // Listing costs the kernel ~0.4 us a process, the job's workers included:
  // between listings the known processes are read from the cache.
  // A process that a listing this soon after the last one would find is
  // younger than kMinLifetimeSeconds, too young for a lifetime CPU%: a
  // one-shot command's second reading, a rate window later, reads the
  // known processes only (an exit shows as a failed read).
  const bool too_soon = listings_ > 0 && now >= listed_at_ &&
                        now - listed_at_ < kMinLifetimeSeconds;
  const bool listing = !too_soon && (round_ <= 2 || round_ % kListEvery == 0);
  auto due = [&](uint32_t pid, const Entry& e) {
    return !e.job &&  // the process table reads it
           (!e.cpu_pct || (e.hot && listing) ||
            pid % kSlices == round_ % kSlices);
  };
  std::optional<uint64_t> pid_now;
  if (listing) pid_now = last_pid();
  const bool nothing_new = round_ > 2 && pid_now && pid_now == listed_at_pid_;
  const bool probed = listing && !nothing_new && round_ > 2 && pid_now &&
                      probe_new_pids(*pid_now);
  if (!listing || nothing_new || probed) {
    // Between listings, or at one that could find nothing new: the known
    // processes (at a listing, the busiest among them too); then the new
    // ones a probe found.
    for (auto& [pid, e] : cache_)
      if (due(pid, e)) read_one(pid, e, false, now, btime);
    if (probed) {
      listed_at_pid_ = pid_now;
      listed_at_ = now;
      ++listings_;
      for (uint32_t pid : probed_) {
        auto [it, fresh] = cache_.try_emplace(pid);
        it->second.listed_round = round_;
        if (fresh || due(pid, it->second))
          read_one(pid, it->second, fresh, now, btime);
      }
    }
    std::erase_if(cache_,
                  [](const auto& kv) { return kv.second.listed_round == 0; });
    return;
  }
  listed_at_pid_ = pid_now;
  listed_at_ = now;
  ++listings_;  // before the reads: read_one tells a first listing apart
  listings_since_full_ = 0;
  bool listed = for_each_pid(proc_root_, [&](uint32_t pid) {
    // Not other work: gpudoctor itself. A one-shot command is busy through
    // its own rate window (~10% of a core, now measured to the nanosecond).
    if (pid == self_pid_) return;
    ++counts_.listed;
    auto [it, fresh] = cache_.try_emplace(pid);
    Entry& e = it->second;
    e.listed_round = round_;
    if (fresh || due(pid, e)) read_one(pid, e, fresh, now, btime);
  });
  if (!listed) {  // keep what was known until /proc can be read again
    --listings_;
    return;
  }
  std::erase_if(
      cache_, [&](const auto& kv) { return kv.second.listed_round != round_; });
}

bool OtherCpuScan::probe_new_pids(uint64_t pid_now) {
  probed_.clear();
  if (!pid_probe_ || !listed_at_pid_ || pid_now <= *listed_at_pid_ ||
      ++listings_since_full_ >= kFullListingEvery)
    return false;  // no probe; the pids wrapped; or a full listing is due
  const uint64_t span = pid_now - *listed_at_pid_;
  if (span > std::max<uint64_t>(kProbeMin, cache_.size() / 2)) return false;
  for (uint64_t p = *listed_at_pid_ + 1; p <= pid_now; ++p) {
    const auto pid = static_cast<uint32_t>(p);
    if (pid == self_pid_) continue;
    switch (pid_probe_(pid)) {
      case PidKind::kProcess:
        probed_.push_back(pid);
        break;
      case PidKind::kNotProcess:
        break;
      case PidKind::kUnknown:
        return false;  // list instead
    }
  }
  counts_.probed = static_cast<size_t>(span);
  return true;
}

void OtherCpuScan::read_one(uint32_t pid, Entry& e, bool fresh, double now,
                            std::optional<uint64_t> btime) {
  if (!fresh && read_clock_only(pid, e, now)) return;
  ++counts_.stat_reads;
  std::optional<PidStat> st;
  // A file read again at the next reading stays open until then (a read
  // through it costs the kernel 40% of an open, read and close): the
  // busiest, read every sample, and a process without a CPU% yet, whose
  // next reading gives its first one, where it has no CPU clock (with one,
  // a one-shot command's second reading reads the clock alone). The
  // others' is opened for each read. A kept file pins its process: a
  // reused pid fails the read and is forgotten until the next listing
  // finds it anew.
  if (e.stat_file.read(pid_path(pid, "stat"), buf_, Ending::kShortRead))
    st = parse_pid_stat(buf_);
  if (!st) {  // gone since the listing (or unreadable): forget it
    e.listed_round = 0;
    return;
  }
  if (!fresh && st->starttime != e.starttime) {  // the pid was reused
    e = Entry{};
    e.listed_round = round_;
    fresh = true;
  }
  const uint64_t ticks = st->utime + st->stime;
  const double tck = static_cast<double>(clk_tck_);
  // Read right after stat: the same process, but for a pid that exits and
  // is reused within microseconds (its starttime tells at the next one).
  const std::optional<uint64_t> ns =
      cpu_clock_ ? cpu_clock_(pid) : std::optional<uint64_t>();
  counts_.clock_reads += ns.has_value();
  if (!fresh && e.at > 0 && now > e.at && ns && e.cpu_ns && *ns >= *e.cpu_ns) {
    e.cpu_pct = static_cast<double>(*ns - *e.cpu_ns) / 1e9 / (now - e.at) * 100;
  } else if (!fresh && e.at > 0 && now > e.at && e.ticks_current &&
             ticks >= e.ticks) {
    e.cpu_pct = static_cast<double>(ticks - e.ticks) / tck / (now - e.at) * 100;
  } else if (fresh && listings_ > 1 && btime) {
    // Not in the previous listing: it started since.
    double age = now - (static_cast<double>(*btime) +
                        static_cast<double>(st->starttime) / tck);
    if (age >= kMinLifetimeSeconds)
      e.cpu_pct = static_cast<double>(ticks) / tck / age * 100;
  }
  cap_text(st->comm, kCommMax);
  if (st->comm != e.comm) {  // exec or rename: its user may have changed too
    e.comm = std::move(st->comm);
    e.described = false;
  }
  e.starttime = st->starttime;
  e.ticks = ticks;
  e.ticks_current = true;
  e.cpu_ns = ns;
  e.at = now;
  e.ppid = st->ppid;
  // Kept for the next reading only where it reads stat again soon: the
  // busiest, and a process without a CPU% yet and without a CPU clock.
  if (!e.hot && (e.cpu_pct || ns)) e.stat_file.close();
}

bool OtherCpuScan::read_clock_only(uint32_t pid, Entry& e, double now) {
  if (!cpu_clock_ || !e.cpu_ns || e.at <= 0 || now <= e.at ||
      now - e.at >= kClockOnlySeconds)
    return false;
  const std::optional<uint64_t> ns = cpu_clock_(pid);
  if (!ns || *ns < *e.cpu_ns) return false;  // gone, or not the same: stat
  ++counts_.clock_reads;
  e.cpu_pct = static_cast<double>(*ns - *e.cpu_ns) / 1e9 / (now - e.at) * 100;
  e.cpu_ns = ns;
  e.at = now;
  e.ticks_current = false;          // stat's ticks are of an earlier reading
  if (!e.hot) e.stat_file.close();  // next read: in its slice
  return true;
}

void OtherCpuScan::describe(uint32_t pid, Entry& e) {
  e.described = true;
  e.user.clear();
  if (read_file(pid_path(pid, "status"), buf_)) {
    if (auto uid = parse_status_euid(buf_)) {
      auto it = user_names_.find(*uid);
      if (it == user_names_.end())
        it = user_names_.emplace(*uid, user_name_of(*uid)).first;
      e.user = it->second;
    }
  }
  e.container.reset();
  std::string c =
      container_from_cgroup(read_cgroup(pid_path(pid, "cgroup"))).short_text();
  if (!c.empty()) e.container = std::move(c);
}

void OtherCpuScan::forget_rate(Entry& e) {
  // Not read while in a job: when it leaves the job (the job ended, its
  // launcher lives on) its next reading is a new baseline, not a rate over
  // the whole job, and its old rate is not shown meanwhile.
  e.job = true;
  e.cpu_pct.reset();
  e.at = 0;
  e.stat_file.close();
}

std::optional<uint32_t> OtherCpuScan::parent(uint32_t pid) const {
  auto it = std::lower_bound(job_links_.begin(), job_links_.end(), pid,
                             [](const std::pair<uint32_t, uint32_t>& l,
                                uint32_t v) { return l.first < v; });
  if (it != job_links_.end() && it->first == pid) return it->second;
  // 0 (never read, or init's parent) ends the walk.
  auto c = cache_.find(pid);
  if (c != cache_.end()) return c->second.ppid;
  return std::nullopt;
}

bool OtherCpuScan::is_gpu_pid(uint32_t pid) const {
  return std::binary_search(gpu_pids_.begin(), gpu_pids_.end(), pid);
}

void OtherCpuScan::set_jobs(const std::vector<uint32_t>& gpu_pids,
                            const std::vector<ProcessSample>& job_processes) {
  gpu_pids_.assign(gpu_pids.begin(), gpu_pids.end());
  std::sort(gpu_pids_.begin(), gpu_pids_.end());
  job_links_.clear();
  for (const ProcessSample& p : job_processes)
    if (p.ppid) job_links_.emplace_back(p.pid, *p.ppid);
  std::sort(job_links_.begin(), job_links_.end());

  for (auto& [pid, e] : cache_) e.job = false;
  auto mark_job = [&](uint32_t pid) {
    if (auto it = cache_.find(pid); it != cache_.end()) forget_rate(it->second);
  };
  for (const ProcessSample& p : job_processes) mark_job(p.pid);
  // The table lists ancestors up to the job's launcher or shell; above it
  // are sshd, the container runtime, init: still not "other work".
  for (uint32_t g : gpu_pids_) {
    mark_job(g);
    auto up = parent(g);
    for (int depth = 0; up && *up != 0 && *up != g && depth < kMaxTreeDepth;
         ++depth) {
      mark_job(*up);
      up = parent(*up);
    }
  }
}

bool OtherCpuScan::in_gpu_job(uint32_t pid) const {
  if (is_gpu_pid(pid)) return true;
  auto up = parent(pid);
  for (int depth = 0; up && *up != 0 && *up != pid && depth < kMaxTreeDepth;
       ++depth) {
    if (is_gpu_pid(*up)) return true;
    up = parent(*up);
  }
  return false;
}

std::vector<uint32_t> OtherCpuScan::busy_families() const {
  std::vector<uint32_t> busy;
  for (const auto& [pid, e] : cache_)
    if (!e.job && e.cpu_pct && *e.cpu_pct >= kMinCpuPct) busy.push_back(pid);
  if (busy.empty()) return busy;
  std::sort(busy.begin(), busy.end());
  auto is_busy = [&](uint32_t pid) {
    return std::binary_search(busy.begin(), busy.end(), pid);
  };
  std::vector<uint32_t> out = busy;
  // Each known process below a busy one, and every ancestor of a busy one.
  auto add_if_below_busy = [&](uint32_t pid) {
    if (is_busy(pid)) return;
    auto up = parent(pid);
    for (int depth = 0; up && *up != 0 && *up != pid && depth < kMaxTreeDepth;
         ++depth) {
      if (is_busy(*up)) {
        out.push_back(pid);
        return;
      }
      up = parent(*up);
    }
  };
  for (const auto& kv : cache_) add_if_below_busy(kv.first);
  for (const auto& link : job_links_) add_if_below_busy(link.first);
  for (uint32_t pid : busy) {
    auto up = parent(pid);
    for (int depth = 0; up && *up != 0 && *up != pid && depth < kMaxTreeDepth;
         ++depth) {
      out.push_back(*up);
      up = parent(*up);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::optional<std::vector<OtherCpuProcess>> OtherCpuScan::top() {
  if (round_ < 2) return std::nullopt;
  ranked_.clear();
  for (auto& [pid, e] : cache_) {
    e.hot = false;
    if (!e.job && e.cpu_pct && *e.cpu_pct >= kMinCpuPct)
      ranked_.emplace_back(*e.cpu_pct, pid);
  }
  std::sort(ranked_.begin(), ranked_.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::vector<OtherCpuProcess> out;
  size_t hot = 0;
  for (const auto& [cpu, pid] : ranked_) {
    if (hot == kHotMax) break;
    Entry& e = cache_.at(pid);
    // A descendant of a GPU process that the table has not listed yet
    // (forked since its last look) is the job's own work.
    if (in_gpu_job(pid)) {
      forget_rate(e);
      continue;
    }
    e.hot = true;
    ++hot;
    if (out.size() == kOtherCpuTopMax) continue;
    if (!e.described) describe(pid, e);
    out.push_back(
        {pid, e.comm, e.user, e.container, std::round(cpu * 10) / 10});
  }
  return out;
}

}  // namespace gd::procfs
