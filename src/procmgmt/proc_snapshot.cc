#include "procmgmt/proc_snapshot.h"

#include <algorithm>

namespace gd::procmgmt {

ProcSnapshot ProcSnapshot::read(const std::string& proc_root) {
  std::vector<ProcEntry> entries;
  for (uint32_t pid : list_pids(proc_root))
    if (auto e = read_proc_entry(proc_root, pid))
      entries.push_back(std::move(*e));
  return from_entries(std::move(entries));
}

ProcSnapshot ProcSnapshot::from_entries(std::vector<ProcEntry> entries) {
  ProcSnapshot s;
  s.entries_ = std::move(entries);
  std::sort(
      s.entries_.begin(), s.entries_.end(),
      [](const ProcEntry& a, const ProcEntry& b) { return a.pid < b.pid; });
  for (const auto& e : s.entries_)
    if (e.ppid != e.pid) s.edges_.emplace_back(e.ppid, e.pid);
  std::sort(s.edges_.begin(), s.edges_.end());
  return s;
}

const ProcEntry* ProcSnapshot::find(uint32_t pid) const {
  auto it = std::lower_bound(
      entries_.begin(), entries_.end(), pid,
      [](const ProcEntry& e, uint32_t v) { return e.pid < v; });
  return it != entries_.end() && it->pid == pid ? &*it : nullptr;
}

std::vector<uint32_t> ProcSnapshot::children(uint32_t pid) const {
  std::vector<uint32_t> out;
  auto lo =
      std::lower_bound(edges_.begin(), edges_.end(), std::make_pair(pid, 0u));
  for (auto it = lo; it != edges_.end() && it->first == pid; ++it)
    out.push_back(it->second);
  return out;
}

std::vector<uint32_t> ProcSnapshot::descendants(uint32_t pid) const {
  std::vector<uint32_t> out;
  std::vector<std::pair<uint32_t, int>> todo;
  auto push_children = [&](uint32_t p, int depth) {
    auto kids = children(p);
    for (auto it = kids.rbegin(); it != kids.rend(); ++it)
      todo.emplace_back(*it, depth);
  };
  push_children(pid, 1);
  while (!todo.empty()) {
    auto [cur, depth] = todo.back();
    todo.pop_back();
    if (cur == pid || depth > kMaxTreeDepth ||
        std::find(out.begin(), out.end(), cur) != out.end())
      continue;  // cyclic ppid data
    out.push_back(cur);
    push_children(cur, depth + 1);
  }
  return out;
}

std::vector<uint32_t> ProcSnapshot::ancestors(uint32_t pid) const {
  std::vector<uint32_t> out;
  const ProcEntry* p = find(pid);
  for (int depth = 0; p && p->ppid != 0 && depth < kMaxTreeDepth; ++depth) {
    if (std::find(out.begin(), out.end(), p->ppid) != out.end() ||
        p->ppid == pid)
      break;
    out.push_back(p->ppid);
    p = find(p->ppid);
  }
  return out;
}

bool ProcSnapshot::is_ancestor(uint32_t ancestor, uint32_t pid) const {
  auto a = ancestors(pid);
  return std::find(a.begin(), a.end(), ancestor) != a.end();
}

}  // namespace gd::procmgmt
