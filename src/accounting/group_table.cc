#include "accounting/group_table.h"

#include <algorithm>

namespace gd::accounting {

uint32_t GroupTable::find_or_add(std::string_view key, std::string_view label) {
  scratch_.assign(key.substr(0, kKeyMax));
  if (auto it = index_.find(scratch_); it != index_.end()) {
    // A label that says more of the same group wins ("slurm 1234" ->
    // "slurm 1234 train-llm (alice, gpu-a)" once scontrol answered).
    std::string& have = rows_[it->second].label;
    const std::string_view more = label.substr(0, kKeyMax);
    if (more.size() > have.size() && more.starts_with(have)) have.assign(more);
    return it->second;
  }
  if (rows_.size() < cap_) {
    const auto i = static_cast<uint32_t>(rows_.size());
    GroupRow row;
    row.key = scratch_;
    row.label.assign(label.substr(0, kKeyMax));
    rows_.push_back(std::move(row));
    index_.emplace(scratch_, i);
    return i;
  }
  if (folded_keys_.size() < kFoldedCountMax) folded_keys_.insert(scratch_);
  if (other_ < 0) {
    other_ = static_cast<int64_t>(rows_.size());
    GroupRow row;
    row.key = "other";
    row.label = "other";
    row.folded = true;
    rows_.push_back(std::move(row));
  }
  return static_cast<uint32_t>(other_);
}

std::vector<GroupRow> GroupTable::take_sorted() {
  std::vector<GroupRow> out = std::move(rows_);
  rows_.clear();
  index_.clear();
  other_ = -1;
  std::stable_sort(out.begin(), out.end(),
                   [](const GroupRow& a, const GroupRow& b) {
                     if (a.folded != b.folded) return b.folded;
                     if (a.usage.held_s != b.usage.held_s)
                       return a.usage.held_s > b.usage.held_s;
                     return a.key < b.key;
                   });
  return out;
}

}  // namespace gd::accounting
