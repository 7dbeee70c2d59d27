#include "procfs/meminfo.h"

#include "procfs/text_util.h"

namespace gd::procfs {

// Values are "NNN kB" (kB means KiB here); a line without a unit is a
// count (e.g. HugePages_Total) and is not one we read.
static std::optional<uint64_t> kib_value(std::string_view rest) {
  std::string_view num = next_field(rest);
  std::string_view unit = next_field(rest);
  auto v = parse_u64(num);
  if (!v || unit != "kB") return std::nullopt;
  return *v * 1024;
}

MemInfo parse_meminfo(std::string_view text) {
  MemInfo m;
  std::string_view line;
  while (next_line(text, line)) {
    if (auto v = value_after_key(line, "MemTotal"))
      m.mem_total_bytes = kib_value(*v);
    else if (auto v = value_after_key(line, "MemAvailable"))
      m.mem_available_bytes = kib_value(*v);
    else if (auto v = value_after_key(line, "SwapTotal"))
      m.swap_total_bytes = kib_value(*v);
    else if (auto v = value_after_key(line, "SwapFree"))
      m.swap_free_bytes = kib_value(*v);
  }
  return m;
}

std::optional<uint64_t> MemInfo::swap_used_bytes() const {
  if (!swap_total_bytes || !swap_free_bytes) return std::nullopt;
  return *swap_total_bytes > *swap_free_bytes
             ? *swap_total_bytes - *swap_free_bytes
             : 0;
}

}  // namespace gd::procfs
