// /proc/vmstat: pages swapped in and out since boot.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace gd::procfs {

struct SwapCounters {
  std::optional<uint64_t> pswpin, pswpout;  // pages, cumulative
};

SwapCounters parse_vmstat(std::string_view text);

}  // namespace gd::procfs
