#include "views/checklist_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/terminal_text.h"

namespace gd {

namespace {

// Values and details name processes (comm, command lines): untrusted text.
std::string checklist_safe(std::string_view text) {
  return terminal_safe(text, kTerminalSentenceMax);
}

}  // namespace

std::string format_checklist_text(const std::vector<CheckItem>& items) {
  size_t id_width = 5;  // "CHECK"
  for (const auto& i : items) id_width = std::max(id_width, i.id.size());
  std::string out =
      fmt::format("{:<6}{:<{}}  {}\n", "", "CHECK", id_width, "VALUE");
  for (const auto& i : items) {
    // A skip without a value says why on its own line; everything else gets
    // the action (warn/fail) or note under the value, so the value column
    // stays readable.
    bool reason_only = (i.value.empty() || i.value == "-") && !i.detail.empty();
    out +=
        fmt::format("{:<6}{:<{}}  {}\n", check_status_name(i.status), i.id,
                    id_width, checklist_safe(reason_only ? i.detail : i.value));
    if (!i.detail.empty() && !reason_only)
      out += fmt::format(
          "{:<{}}  {}{}\n", "", 6 + id_width,
          i.status == CheckStatus::kWarn || i.status == CheckStatus::kFail
              ? "-> "
              : "",
          checklist_safe(i.detail));
  }
  int pass = 0, warn = 0, fail = 0, skip = 0;
  for (const auto& i : items) {
    switch (i.status) {
      case CheckStatus::kPass:
        ++pass;
        break;
      case CheckStatus::kWarn:
        ++warn;
        break;
      case CheckStatus::kFail:
        ++fail;
        break;
      case CheckStatus::kSkip:
        ++skip;
        break;
    }
  }
  out += fmt::format("\n{} pass, {} warn, {} fail, {} skip\n", pass, warn, fail,
                     skip);
  return out;
}

std::string format_checklist_json(const std::vector<CheckItem>& items) {
  nlohmann::json checks = nlohmann::json::array();
  for (const auto& i : items)
    checks.push_back({{"id", i.id},
                      {"status", check_status_name(i.status)},
                      {"value", i.value},
                      {"detail", i.detail}});
  // Invalid UTF-8 from a file under /proc or /sys must not abort the dump.
  return nlohmann::json{{"checks", checks}}.dump(
             2, ' ', false, nlohmann::json::error_handler_t::replace) +
         "\n";
}

}  // namespace gd
