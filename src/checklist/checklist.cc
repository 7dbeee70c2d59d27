#include "checklist/checklist.h"

#include <fmt/format.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <exception>
#include <nlohmann/json.hpp>

#include "common/terminal_text.h"

namespace gd {

namespace {

std::optional<uint64_t> statvfs_size(const std::string& path) {
  struct statvfs st {};
  if (::statvfs(path.c_str(), &st) != 0) return std::nullopt;
  return static_cast<uint64_t>(st.f_blocks) * st.f_frsize;
}

}  // namespace

CheckContext::CheckContext(const TraceHeader& h, const Sample& s,
                           std::string proc, std::string sys)
    : header(h),
      sample(s),
      proc_root(std::move(proc)),
      sys_root(std::move(sys)),
      fs_size_bytes(statvfs_size) {}

const char* check_status_name(CheckStatus status) {
  switch (status) {
    case CheckStatus::kPass:
      return "pass";
    case CheckStatus::kWarn:
      return "warn";
    case CheckStatus::kFail:
      return "fail";
    case CheckStatus::kSkip:
      return "skip";
  }
  return "skip";
}

std::vector<CheckItem> run_checks(const CheckContext& ctx) {
  std::vector<CheckItem> out;
  for (const auto& entry : check_table()) {
    try {
      auto items = entry.run(ctx);
      out.insert(out.end(), std::make_move_iterator(items.begin()),
                 std::make_move_iterator(items.end()));
    } catch (const std::exception& e) {
      out.push_back({entry.id, CheckStatus::kSkip, "-",
                     std::string("check failed: ") + e.what()});
    }
  }
  return out;
}

int checklist_exit_code(const std::vector<CheckItem>& items) {
  int code = 0;
  for (const auto& i : items) {
    if (i.status == CheckStatus::kFail) return 2;
    if (i.status == CheckStatus::kWarn) code = 1;
  }
  return code;
}

namespace {

// Values and details name processes (comm, command lines): untrusted text.
std::string safe(std::string_view text) {
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
    out += fmt::format("{:<6}{:<{}}  {}\n", check_status_name(i.status), i.id,
                       id_width, safe(reason_only ? i.detail : i.value));
    if (!i.detail.empty() && !reason_only)
      out += fmt::format(
          "{:<{}}  {}{}\n", "", 6 + id_width,
          i.status == CheckStatus::kWarn || i.status == CheckStatus::kFail
              ? "-> "
              : "",
          safe(i.detail));
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
