#include "slurm/scontrol_job.h"

#include <algorithm>
#include <cctype>
#include <ctime>

#include "common/slurm_job_id.h"
#include "common/text_cap.h"

namespace gd::slurm {
namespace {

bool digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(),
                                   [](char c) { return c >= '0' && c <= '9'; });
}

// The value of " Key=" (searched from `from`) up to the next space.
std::string_view word_after(std::string_view line, std::string_view key,
                            size_t from) {
  size_t k = line.find(key, from);
  if (k == std::string_view::npos) return {};
  size_t v = k + key.size();
  size_t end = line.find(' ', v);
  return line.substr(
      v, end == std::string_view::npos ? std::string_view::npos : end - v);
}

// Where "UserId=<name>(<digits>) GroupId=" starts in `line` at or after
// `from` (the space before it); npos if nowhere. `user` gets the name.
size_t find_user(std::string_view line, size_t from, std::string_view& user) {
  constexpr std::string_view kUser = " UserId=";
  for (size_t k = line.find(kUser, from); k != std::string_view::npos;
       k = line.find(kUser, k + 1)) {
    size_t v = k + kUser.size();
    size_t open = line.find('(', v);
    size_t space = line.find(' ', v);
    if (open == std::string_view::npos || open > space) continue;
    size_t close = line.find(')', open);
    if (close == std::string_view::npos || close > space) continue;
    if (!digits(line.substr(open + 1, close - open - 1))) continue;
    if (line.substr(close + 1).starts_with(" GroupId=")) {
      user = line.substr(v, open - v);
      return k;
    }
  }
  return std::string_view::npos;
}

std::optional<ScontrolJob> parse_line(std::string_view line,
                                      std::string_view id) {
  constexpr std::string_view kJobId = "JobId=";
  if (!line.starts_with(kJobId)) return std::nullopt;
  std::string_view got = word_after(line, kJobId, 0);
  if (got != id) return std::nullopt;
  constexpr std::string_view kName = " JobName=";
  size_t name_at = line.find(kName);
  if (name_at == std::string_view::npos) return std::nullopt;
  size_t name_from = name_at + kName.size();
  std::string_view user;
  size_t user_at = find_user(line, name_from, user);
  if (user_at == std::string_view::npos) return std::nullopt;
  ScontrolJob out;
  out.job.id.assign(id);
  out.job.name.assign(line.substr(name_from, user_at - name_from));
  out.job.user.assign(user);
  const size_t after = line.find(" GroupId=", user_at);
  out.job.partition.assign(word_after(line, " Partition=", after));
  out.state.assign(word_after(line, " JobState=", after));
  out.start_time = parse_slurm_time(word_after(line, " StartTime=", after));
  cap_text(out.job.name, kSlurmJobNameMax);
  cap_text(out.job.user, kSlurmUserMax);
  cap_text(out.job.partition, kSlurmUserMax);
  cap_text(out.state, kSlurmUserMax);
  return out;
}

}  // namespace

std::optional<double> parse_slurm_time(std::string_view t) {
  // YYYY-MM-DDTHH:MM:SS exactly.
  if (t.size() != 19 || t[4] != '-' || t[7] != '-' || t[10] != 'T' ||
      t[13] != ':' || t[16] != ':')
    return std::nullopt;
  auto num = [&](size_t at, size_t len) -> int {
    int v = 0;
    for (size_t i = at; i < at + len; ++i) {
      if (t[i] < '0' || t[i] > '9') return -1;
      v = v * 10 + (t[i] - '0');
    }
    return v;
  };
  std::tm tm{};
  tm.tm_year = num(0, 4) - 1900;
  tm.tm_mon = num(5, 2) - 1;
  tm.tm_mday = num(8, 2);
  tm.tm_hour = num(11, 2);
  tm.tm_min = num(14, 2);
  tm.tm_sec = num(17, 2);
  if (tm.tm_year < 70 || tm.tm_mon < 0 || tm.tm_mon > 11 || tm.tm_mday < 1 ||
      tm.tm_mday > 31 || tm.tm_hour < 0 || tm.tm_hour > 23 || tm.tm_min < 0 ||
      tm.tm_min > 59 || tm.tm_sec < 0 || tm.tm_sec > 60)
    return std::nullopt;
  tm.tm_isdst = -1;
  std::time_t s = std::mktime(&tm);
  if (s == static_cast<std::time_t>(-1)) return std::nullopt;
  return static_cast<double>(s);
}

std::optional<ScontrolJob> parse_scontrol_job(std::string_view output,
                                              std::string_view id) {
  if (!is_slurm_job_id(id)) return std::nullopt;
  while (!output.empty()) {
    size_t nl = output.find('\n');
    std::string_view line = output.substr(0, nl);
    output = nl == std::string_view::npos ? std::string_view()
                                          : output.substr(nl + 1);
    if (auto job = parse_line(line, id)) return job;
  }
  return std::nullopt;
}

}  // namespace gd::slurm
