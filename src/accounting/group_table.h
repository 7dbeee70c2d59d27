// The groups of one dimension (jobs, users, ...), bounded: a hostile trace
// can name millions of pids, so past `cap` groups every new one is folded
// into one "other" row.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "accounting/account.h"

namespace gd::accounting {

class GroupTable {
 public:
  explicit GroupTable(size_t cap) : cap_(cap) {}
  // The row of `key`, added with `label` when new (or "other" when full).
  uint32_t find_or_add(std::string_view key, std::string_view label);
  GroupRow& row(uint32_t i) { return rows_[i]; }
  const GroupRow& row(uint32_t i) const { return rows_[i]; }
  size_t size() const { return rows_.size(); }
  // Distinct keys folded into "other" (counted up to kFoldedCountMax).
  size_t folded() const { return folded_keys_.size(); }
  // The rows by held time, largest first, "other" last; empties the table.
  std::vector<GroupRow> take_sorted();

  // Keys and labels are cut to this many bytes (they come from process
  // names and cgroup paths).
  static constexpr size_t kKeyMax = 256;

 private:
  size_t cap_;
  std::unordered_map<std::string, uint32_t> index_;
  std::vector<GroupRow> rows_;
  int64_t other_ = -1;
  std::unordered_set<std::string> folded_keys_;
  std::string scratch_;
};

}  // namespace gd::accounting
