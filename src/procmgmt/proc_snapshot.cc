#include "procmgmt/proc_snapshot.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "procfs/cpu_stat.h"
#include "procfs/pid_listing.h"

namespace gd::procmgmt {

namespace {

// /proc/stat is a few KiB even on a 256-CPU host; more is not /proc/stat.
constexpr std::streamsize kMaxStatBytes = 1 << 20;

std::optional<double> read_boot_time(const std::string& proc_root) {
  std::ifstream in(proc_root + "/stat");
  if (!in) return std::nullopt;
  std::string text(static_cast<size_t>(kMaxStatBytes), '\0');
  in.read(text.data(), kMaxStatBytes);
  text.resize(static_cast<size_t>(in.gcount()));
  auto btime = procfs::parse_proc_stat(text).btime;
  if (!btime) return std::nullopt;
  return static_cast<double>(*btime);
}

}  // namespace

ProcSnapshot ProcSnapshot::read(const std::string& proc_root) {
  std::vector<ProcEntry> entries;
  for (uint32_t pid : procfs::list_pids(proc_root))
    if (auto e = read_proc_entry(proc_root, pid))
      entries.push_back(std::move(*e));
  return from_entries(std::move(entries), read_boot_time(proc_root));
}

std::optional<double> ProcSnapshot::start_time(const ProcEntry& p) const {
  static const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  if (!boot_time_ || ticks <= 0) return std::nullopt;
  return *boot_time_ + static_cast<double>(p.starttime) / ticks;
}

ProcSnapshot ProcSnapshot::from_entries(std::vector<ProcEntry> entries,
                                        std::optional<double> boot_time) {
  ProcSnapshot s;
  s.boot_time_ = boot_time;
  s.entries_ = std::move(entries);
  std::sort(
      s.entries_.begin(), s.entries_.end(),
      [](const ProcEntry& a, const ProcEntry& b) { return a.pid < b.pid; });
  std::vector<std::pair<uint32_t, uint32_t>> links;
  links.reserve(s.entries_.size());
  for (const auto& e : s.entries_) links.emplace_back(e.pid, e.ppid);
  s.links_ = PidTree(std::move(links));
  return s;
}

const ProcEntry* ProcSnapshot::find(uint32_t pid) const {
  auto it = std::lower_bound(
      entries_.begin(), entries_.end(), pid,
      [](const ProcEntry& e, uint32_t v) { return e.pid < v; });
  return it != entries_.end() && it->pid == pid ? &*it : nullptr;
}

std::vector<uint32_t> ProcSnapshot::children(uint32_t pid) const {
  return links_.children(pid);
}

std::vector<uint32_t> ProcSnapshot::descendants(uint32_t pid) const {
  return links_.descendants(pid);
}

std::vector<uint32_t> ProcSnapshot::ancestors(uint32_t pid) const {
  return links_.ancestors(pid);
}

bool ProcSnapshot::is_ancestor(uint32_t ancestor, uint32_t pid) const {
  return links_.is_ancestor(ancestor, pid);
}

}  // namespace gd::procmgmt
