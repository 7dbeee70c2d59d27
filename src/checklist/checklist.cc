#include "checklist/checklist.h"

#include <sys/statvfs.h>

#include <algorithm>
#include <exception>

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

}  // namespace gd
