// Every process of a /proc tree at one moment, with parent/child links (the
// model's PidTree).
// One-shot commands (who, kill, ps --tree) read it once; it is not a cache.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/process_tree.h"
#include "procmgmt/proc_entry.h"

namespace gd::procmgmt {

class ProcSnapshot {
 public:
  // All processes under proc_root (those that vanish while it is read are
  // simply absent).
  static ProcSnapshot read(const std::string& proc_root);
  // `boot_time`: Unix seconds that ProcEntry::starttime counts from (0 when
  // the entries come from a trace, whose start times are Unix seconds
  // already); nullopt leaves start times unknown.
  static ProcSnapshot from_entries(std::vector<ProcEntry> entries,
                                   std::optional<double> boot_time = {});

  // When `p` started, Unix seconds; nullopt when the boot time is unknown.
  std::optional<double> start_time(const ProcEntry& p) const;

  const ProcEntry* find(uint32_t pid) const;
  const std::vector<ProcEntry>& entries() const { return entries_; }
  // Direct children, ascending pid.
  std::vector<uint32_t> children(uint32_t pid) const;
  // Children, grandchildren, ... depth-first, each parent before its children.
  std::vector<uint32_t> descendants(uint32_t pid) const;
  // Parent, grandparent, ... up to the first process whose parent is not in
  // the snapshot (pid 1's parent is 0).
  std::vector<uint32_t> ancestors(uint32_t pid) const;
  bool is_ancestor(uint32_t ancestor, uint32_t pid) const;

 private:
  std::vector<ProcEntry> entries_;  // by pid
  std::optional<double> boot_time_;
  PidTree links_;
};

}  // namespace gd::procmgmt
