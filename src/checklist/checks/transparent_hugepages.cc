// transparent-hugepages: THP itself helps large host buffers, but with
// defrag "always" every huge-page fault may stall in direct compaction
// (tens of milliseconds) — visible as stalls of data loaders and of pinned
// allocations. The kernel default "madvise" only compacts for regions that
// ask for it.
#include <fmt/format.h>

#include "checklist/check_util.h"

namespace gd {

using namespace checklist;

namespace {
// "always [madvise] never" -> "madvise"; "" when no choice is bracketed.
std::string selected(const std::optional<std::string>& text) {
  if (!text) return {};
  auto open = text->find('[');
  auto close = text->find(']', open);
  if (open == std::string::npos || close == std::string::npos) return {};
  return text->substr(open + 1, close - open - 1);
}
}  // namespace

std::vector<CheckItem> check_transparent_hugepages(const CheckContext& ctx) {
  constexpr const char* kId = "transparent-hugepages";
  const std::string dir = ctx.sys_root + "/kernel/mm/transparent_hugepage/";
  std::string enabled = selected(read_line(dir + "enabled"));
  std::string defrag = selected(read_line(dir + "defrag"));
  if (enabled.empty())
    return {make_item(kId, CheckStatus::kSkip, "-",
                      "/sys/kernel/mm/transparent_hugepage is not readable "
                      "(kernel without THP?)")};
  std::string value = fmt::format("enabled={} defrag={}", enabled,
                                  defrag.empty() ? "?" : defrag);
  if (enabled != "never" && defrag == "always")
    return {make_item(
        kId, CheckStatus::kWarn, value,
        "huge-page faults stall in direct compaction: `echo madvise > "
        "/sys/kernel/mm/transparent_hugepage/defrag` (or defer+madvise)")};
  return {make_item(kId, CheckStatus::kPass, value)};
}

}  // namespace gd
