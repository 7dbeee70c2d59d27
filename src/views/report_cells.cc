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
  std::string out;
  auto add = [&out](double s, const char* name) {
    if (s <= 0) return;
    if (!out.empty()) out += "+";
    out += name;
  };
  add(u.split_sm_s, "sm");
  add(u.split_memory_s, "memory");
  add(u.split_equal_s, "equal");
  return out.empty() ? "-" : out;
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
