#include "procfs/process_table.h"

#include <dirent.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <unordered_set>

#include "procfs/process_files.h"
#include "procfs/text_util.h"

namespace gd::procfs {

namespace {

// A /proc directory entry that is a pid ("1234"), or nullopt.
std::optional<uint32_t> pid_of_entry(const char* name) {
  if (name[0] < '1' || name[0] > '9') return std::nullopt;
  auto v = parse_u64(name);
  if (!v || *v > UINT32_MAX) return std::nullopt;
  return static_cast<uint32_t>(*v);
}

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
constexpr uint32_t kRescanSlices = 16;

}  // namespace

ProcessTable::ProcessTable(std::string proc_root)
    : proc_root_(std::move(proc_root)),
      clk_tck_(sysconf(_SC_CLK_TCK)),
      page_size_(sysconf(_SC_PAGESIZE)) {
  if (clk_tck_ <= 0) clk_tck_ = 100;
  if (page_size_ <= 0) page_size_ = 4096;
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

const char* ProcessTable::tid_path(uint32_t pid, uint32_t tid, const char* file) {
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

void ProcessTable::children_from_files(uint32_t pid, std::vector<uint32_t>& out) {
  // A child is listed under the thread that forked it, so every thread's
  // file is read, not only the main thread's.
  DIR* dir = opendir(pid_path(pid, "task"));
  if (!dir) return;
  scratch_.clear();
  while (dirent* e = readdir(dir)) {
    if (auto tid = pid_of_entry(e->d_name)) scratch_.push_back(*tid);
  }
  closedir(dir);
  for (uint32_t tid : scratch_) {
    if (read_file(tid_path(pid, tid, "children"), buf_)) parse_pid_list(buf_, out);
  }
}

void ProcessTable::rescan_parents() {
  ++scan_round_;
  DIR* dir = opendir(proc_root_.c_str());
  if (!dir) return;
  while (dirent* e = readdir(dir)) {
    auto pid = pid_of_entry(e->d_name);
    if (!pid) continue;
    auto [it, fresh] = parent_of_.try_emplace(*pid);
    if (fresh || *pid % kRescanSlices == scan_round_ % kRescanSlices) {
      // Only the ppid is wanted; it sits right after the comm.
      if (read_file(pid_path(*pid, "stat"), buf_)) {
        if (auto st = parse_pid_stat(buf_)) it->second.ppid = st->ppid;
      }
    }
    it->second.round = scan_round_;
  }
  closedir(dir);
  std::erase_if(parent_of_, [&](const auto& kv) { return kv.second.round != scan_round_; });
  edges_.clear();
  for (const auto& [pid, entry] : parent_of_) edges_.emplace_back(entry.ppid, pid);
  std::sort(edges_.begin(), edges_.end());
}

const std::string& ProcessTable::user_name(uint32_t uid) {
  auto it = user_names_.find(uid);
  if (it != user_names_.end()) return it->second;
  std::string name;
  passwd pw{}, *result = nullptr;
  char buf[4096];
  if (getpwuid_r(uid, &pw, buf, sizeof buf, &result) == 0 && result && result->pw_name)
    name = result->pw_name;
  else
    name = std::to_string(uid);
  return user_names_.emplace(uid, std::move(name)).first->second;
}

void ProcessTable::read_static(uint32_t pid, Cached& c, double now) {
  c.static_read_at = now;
  if (read_file(pid_path(pid, "status"), buf_)) {
    if (auto uid = parse_status_euid(buf_)) c.user = user_name(*uid);
  }
  c.cmdline = read_file(pid_path(pid, "cmdline"), buf_) ? cmdline_from_raw(buf_) : "";
  c.cgroup = read_file(pid_path(pid, "cgroup"), buf_) ? parse_cgroup(buf_) : std::nullopt;
  // maps is only readable with ptrace access (same user or CAP_SYS_PTRACE);
  // unreadable means "no libs known", the list stays empty.
  c.libs = read_file(pid_path(pid, "maps"), buf_) ? parse_maps_cuda_libs(buf_)
                                                  : std::vector<std::string>{};
}

void ProcessTable::children_of(uint32_t pid, const PidStat& st, bool is_root,
                               Cached& c, bool fresh, std::vector<uint32_t>& out) {
  if (discovery_ == Discovery::kStatScan) {
    auto lo = std::lower_bound(edges_.begin(), edges_.end(), std::make_pair(pid, 0u));
    for (auto it = lo; it != edges_.end() && it->first == pid; ++it) out.push_back(it->second);
    return;
  }
  if (discovery_ != Discovery::kChildrenFiles) return;
  // Children files are re-read every sample for the GPU processes themselves
  // (their direct children are the data-loader workers, which PyTorch
  // respawns every epoch) and for a rotating slice of the rest; in between
  // the cached list is used. Reading them for every one of hundreds of
  // workers each second was most of the cost of a sample.
  if (fresh || is_root || pid % kRescanSlices == scan_round_ % kRescanSlices) {
    c.children.clear();
    if (st.num_threads <= 1) {
      // One thread: its only children file is the main thread's; skip the
      // task directory listing.
      if (read_file(tid_path(pid, pid, "children"), buf_)) parse_pid_list(buf_, c.children);
    } else {
      children_from_files(pid, c.children);
    }
  }
  out.insert(out.end(), c.children.begin(), c.children.end());
}

std::vector<ProcessSample> ProcessTable::processes(const std::vector<uint32_t>& gpu_pids,
                                                   double now,
                                                   std::optional<uint64_t> btime) {
  if (discovery_ == Discovery::kUndecided) decide_discovery(gpu_pids);
  if (discovery_ == Discovery::kStatScan)
    rescan_parents();  // advances scan_round_
  else
    ++scan_round_;

  std::vector<ProcessSample> out;
  std::unordered_set<uint32_t> listed;
  // Breadth-first from the GPU processes; (pid, expected parent) pairs, the
  // parent check drops a cached child pid that was reused by another process.
  std::vector<std::pair<uint32_t, uint32_t>> queue;
  for (uint32_t pid : gpu_pids) queue.emplace_back(pid, 0);
  std::vector<uint32_t> children;
  for (size_t qi = 0; qi < queue.size(); ++qi) {
    auto [pid, parent] = queue[qi];
    bool is_root = parent == 0;
    if (listed.count(pid)) continue;
    ProcessSample p;
    p.pid = pid;
    std::optional<PidStat> st;
    if (read_file(pid_path(pid, "stat"), buf_)) st = parse_pid_stat(buf_);
    if (!st || (!is_root && st->ppid != parent)) {
      // A descendant that exited since it was found is simply gone; a GPU
      // process that is gone from /proc is what the user must hear about.
      if (!is_root) continue;
      p.state = "missing";
      listed.insert(pid);
      out.push_back(std::move(p));
      continue;
    }
    if (discovery_ == Discovery::kStatScan) parent_of_[pid].ppid = st->ppid;

    auto [it, fresh] = cache_.try_emplace(pid);
    Cached& c = it->second;
    if (!fresh && c.starttime != st->starttime) {  // pid reused
      c = Cached{};
      fresh = true;
    }
    c.starttime = st->starttime;
    if (fresh || now - c.static_read_at >= kStaticRefreshSeconds || now < c.static_read_at)
      read_static(pid, c, now);

    uint64_t ticks = st->utime + st->stime;
    if (!fresh && now > c.prev_now && ticks >= c.prev_ticks) {
      double cpu_s = static_cast<double>(ticks - c.prev_ticks) / static_cast<double>(clk_tck_);
      p.cpu_pct = 100.0 * cpu_s / (now - c.prev_now);
    }
    c.prev_ticks = ticks;
    c.prev_now = now;

    children.clear();
    children_of(pid, *st, is_root, c, fresh, children);
    for (uint32_t child : children) queue.emplace_back(child, pid);

    p.ppid = st->ppid;
    p.user = c.user;
    p.name = std::move(st->comm);
    p.cmdline = c.cmdline;
    p.state = std::string(1, st->state);
    p.threads = st->num_threads;
    p.rss_bytes = st->rss_pages * static_cast<uint64_t>(page_size_);
    p.cgroup = c.cgroup;
    p.libs = c.libs;
    if (btime)
      p.start_time = static_cast<double>(*btime) +
                     static_cast<double>(st->starttime) / static_cast<double>(clk_tck_);
    listed.insert(pid);
    out.push_back(std::move(p));
  }
  std::sort(out.begin(), out.end(),
            [](const ProcessSample& x, const ProcessSample& y) { return x.pid < y.pid; });
  std::erase_if(cache_, [&](const auto& kv) { return !listed.count(kv.first); });
  return out;
}

}  // namespace gd::procfs
