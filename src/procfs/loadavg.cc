#include "procfs/loadavg.h"

#include "procfs/text_util.h"

namespace gd::procfs {

std::optional<double> parse_loadavg1(std::string_view text) {
  return parse_double(next_field(text));
}

std::optional<uint64_t> parse_loadavg_last_pid(std::string_view text) {
  for (int i = 0; i < 4; ++i)
    if (next_field(text).empty()) return std::nullopt;
  return parse_u64(next_field(text));
}

}  // namespace gd::procfs
