// Cells the text, JSON and CSV forms of `gpudoctor report` share.
#include <fmt/format.h>

#include "views/report_view.h"

namespace gd {

std::vector<int> report_gpus(uint64_t mask) {
  std::vector<int> out;
  for (int i = 0; i < 64; ++i)
    if (mask & (uint64_t{1} << i)) out.push_back(i);
  return out;
}

std::string report_split_text(const accounting::Usage& u) {
  return accounting::split_text(u);
}

std::string report_findings_text(const accounting::GroupRow& row) {
  std::string out;
  for (const auto& f : row.findings) {
    if (!out.empty()) out += ", ";
    out += fmt::format("{} {:.0f}%", f.id, 100 * f.share);
  }
  return out;
}

}  // namespace gd
