#include "accounting/owner.h"

#include <charconv>

#include "common/container_ref.h"

namespace gd::accounting {
namespace {

// Process names are at most 15 bytes (comm); a hostile trace's are cut.
constexpr size_t kNameMax = 64;

std::string_view cut(std::string_view s, size_t max) {
  return s.substr(0, max);
}

}  // namespace

std::optional<uint64_t> slurm_job_id(std::string_view cgroup) {
  // Each path component "job_<digits>", the last one winning (a nested
  // container's own path comes after the job's).
  std::optional<uint64_t> found;
  size_t pos = 0;
  while (pos <= cgroup.size()) {
    size_t end = cgroup.find('/', pos);
    if (end == std::string_view::npos) end = cgroup.size();
    std::string_view part = cgroup.substr(pos, end - pos);
    if (part.size() > 4 && part.size() <= 24 && part.substr(0, 4) == "job_") {
      uint64_t id = 0;
      const char* first = part.data() + 4;
      const char* last = part.data() + part.size();
      auto [p, ec] = std::from_chars(first, last, id);
      if (ec == std::errc() && p == last) found = id;
    }
    pos = end + 1;
  }
  return found;
}

void owner_of(const ProcessTree& tree, uint32_t pid, OwnerKeys& out) {
  const ProcessSample* p = tree.find(pid);
  const uint32_t group = tree.job_group(pid);
  const ProcessSample* g = tree.find(group);

  std::optional<uint64_t> slurm;
  if (p && p->cgroup) slurm = slurm_job_id(*p->cgroup);
  if (!slurm && g && g->cgroup) slurm = slurm_job_id(*g->cgroup);
  if (slurm) {
    out.job_key = "slurm:" + std::to_string(*slurm);
    out.job_label = "slurm job " + std::to_string(*slurm);
  } else {
    // The grouping pid, and its start time when known: a pid reused a day
    // later is another job.
    const ProcessSample* named = g ? g : p;
    out.job_key = "pid:" + std::to_string(group);
    if (named && named->start_time)
      out.job_key +=
          "@" + std::to_string(static_cast<int64_t>(*named->start_time));
    out.job_label.clear();
    if (named && !named->name.empty())
      out.job_label.append(cut(named->name, kNameMax)).append(" ");
    out.job_label += "(pid " + std::to_string(group) + ")";
    if (!named) out.job_label += " not in /proc";
  }

  const std::string_view user =
      p && !p->user.empty() ? cut(p->user, kNameMax) : std::string_view();
  out.user_key.assign("u:").append(user);
  out.user_label.assign(user.empty() ? std::string_view("unknown") : user);

  const ContainerRef c = p ? container_from_cgroup(p->cgroup) : ContainerRef{};
  const std::string shortname = c.short_text();
  out.container_key.assign("c:").append(shortname);
  out.container_label = shortname.empty() ? "(no container)" : shortname;
}

}  // namespace gd::accounting
