#include "procfs/pressure.h"

#include "procfs/text_util.h"

namespace gd::procfs {

std::optional<double> parse_psi_some_avg10(std::string_view text) {
  std::string_view line;
  while (next_line(text, line)) {
    std::string_view rest = line;
    if (next_field(rest) != "some") continue;
    for (std::string_view f = next_field(rest); !f.empty();
         f = next_field(rest)) {
      if (!f.starts_with("avg10=")) continue;
      auto pct = parse_double(f.substr(6));
      return pct && *pct <= 100 ? pct : std::nullopt;  // a share, in percent
    }
  }
  return std::nullopt;
}

}  // namespace gd::procfs
