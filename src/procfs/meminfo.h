// /proc/meminfo: the memory and swap totals the model needs, in bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace gd::procfs {

struct MemInfo {
  std::optional<uint64_t> mem_total_bytes, mem_available_bytes,
      swap_total_bytes, swap_free_bytes;
  std::optional<uint64_t> swap_used_bytes() const;
};

MemInfo parse_meminfo(std::string_view text);

}  // namespace gd::procfs
