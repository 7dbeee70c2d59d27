#include "procfs/loadavg.h"

#include "procfs/text_util.h"

namespace gd::procfs {

std::optional<double> parse_loadavg1(std::string_view text) {
  return parse_double(next_field(text));
}

}  // namespace gd::procfs
