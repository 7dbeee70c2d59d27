#include "procfs/vmstat.h"

#include "procfs/text_util.h"

namespace gd::procfs {

SwapCounters parse_vmstat(std::string_view text) {
  SwapCounters c;
  std::string_view line;
  while (next_line(text, line)) {
    std::string_view rest = line;
    std::string_view key = next_field(rest);
    if (key == "pswpin")
      c.pswpin = parse_u64(next_field(rest));
    else if (key == "pswpout")
      c.pswpout = parse_u64(next_field(rest));
  }
  return c;
}

}  // namespace gd::procfs
