#include "common/slurm_job_id.h"

#include <algorithm>

namespace gd {
namespace {

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(),
                                   [](char c) { return c >= '0' && c <= '9'; });
}

// "job_<id>" -> id; empty when the component is not one.
std::string_view job_component(std::string_view part) {
  if (!part.starts_with("job_")) return {};
  std::string_view id = part.substr(4);
  return is_slurm_job_id(id) ? id : std::string_view();
}

}  // namespace

bool is_slurm_job_id(std::string_view id) {
  return id.size() <= kSlurmJobIdMax && all_digits(id);
}

std::optional<std::string> slurm_job_in_cgroup_path(std::string_view path) {
  std::string_view prev;  // the component before `part`
  size_t pos = 0;
  while (pos < path.size()) {
    size_t end = path.find('/', pos);
    if (end == std::string_view::npos) end = path.size();
    std::string_view part = path.substr(pos, end - pos);
    pos = end + 1;
    if (part.empty()) continue;
    std::string_view id = job_component(part);
    if (!id.empty()) {
      const bool after_uid =
          prev.starts_with("uid_") && all_digits(prev.substr(4));
      const bool after_scope = prev.ends_with("slurmstepd.scope");
      std::string_view next;
      if (pos < path.size()) {
        size_t next_end = path.find('/', pos);
        next = path.substr(pos, next_end == std::string_view::npos
                                    ? std::string_view::npos
                                    : next_end - pos);
      }
      const bool before_step = next.size() > 5 && next.starts_with("step_");
      if (after_uid || after_scope || before_step) return std::string(id);
    }
    prev = part;
  }
  return std::nullopt;
}

std::optional<std::string> slurm_job_in_cgroup_file(std::string_view text) {
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text =
        nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    size_t c1 = line.find(':');
    if (c1 == std::string_view::npos) continue;
    size_t c2 = line.find(':', c1 + 1);
    if (c2 == std::string_view::npos) continue;
    if (auto id = slurm_job_in_cgroup_path(line.substr(c2 + 1))) return id;
  }
  return std::nullopt;
}

std::optional<std::string> slurm_job_in_environ(std::string_view environ) {
  constexpr std::string_view kKey = "SLURM_JOB_ID=";
  while (!environ.empty()) {
    size_t nul = environ.find('\0');
    std::string_view entry = environ.substr(0, nul);
    environ = nul == std::string_view::npos ? std::string_view()
                                            : environ.substr(nul + 1);
    if (!entry.starts_with(kKey)) continue;
    std::string_view id = entry.substr(kKey.size());
    if (is_slurm_job_id(id)) return std::string(id);
    return std::nullopt;  // getenv would find this one: a bad value is no id
  }
  return std::nullopt;
}

}  // namespace gd
