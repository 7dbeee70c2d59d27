#include "accounting/owner.h"

#include "common/container_ref.h"
#include "common/redact.h"
#include "common/slurm_job_id.h"
#include "model/slurm_label.h"

namespace gd::accounting {
namespace {

// Process names are at most 15 bytes (comm); a hostile trace's are cut.
constexpr size_t kNameMax = 64;

std::string_view cut(std::string_view s, size_t max) {
  return s.substr(0, max);
}

// A command line cut to kJobCommandMax bytes, not inside a UTF-8 character,
// with "..." where cut.
std::string cut_command(std::string_view raw) {
  // Labels leave the host (serve's API, /metrics): secrets on the command
  // line do not.
  const std::string redacted = redact_secrets(raw);
  std::string_view cmd = redacted;
  if (cmd.size() <= kJobCommandMax) return std::string(cmd);
  size_t n = kJobCommandMax;
  while (n > 0 && (static_cast<unsigned char>(cmd[n]) & 0xC0) == 0x80) --n;
  return std::string(cmd.substr(0, n)) + "...";
}

}  // namespace

void owner_of(const ProcessTree& tree, uint32_t pid, OwnerKeys& out) {
  const ProcessSample* p = tree.find(pid);
  const uint32_t group = tree.job_group(pid);
  const ProcessSample* g = tree.find(group);

  std::optional<std::string> slurm;
  for (const ProcessSample* q : {p, g}) {
    if (slurm || !q) continue;
    slurm = q->slurm_job_id;
    if (!slurm && q->cgroup) slurm = slurm_job_in_cgroup_path(*q->cgroup);
  }
  if (slurm) {
    out.job_key = "slurm:" + *slurm;
    out.job_label = slurm_job_label(tree.sample(), *slurm);
  } else {
    // The grouping pid, and its start time when known: a pid reused a day
    // later is another job.
    const ProcessSample* named = g ? g : p;
    out.job_key = "pid:" + std::to_string(group);
    if (named && named->start_time)
      out.job_key +=
          "@" + std::to_string(static_cast<int64_t>(*named->start_time));
    out.job_label.clear();
    // The launcher's command line, as a user would recognise the job; its
    // name where it has none (a kernel thread, a zombie).
    if (named && !named->cmdline.empty())
      out.job_label.append(cut_command(named->cmdline)).append(" ");
    else if (named && !named->name.empty())
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

  // The pod: "namespace/name" for all its containers, whether or not it
  // was deleted since (one row, not two); by its UID while the names are
  // unknown.
  const std::optional<ProcessPod>* pod = p ? &p->pod : nullptr;
  if (pod && *pod && (*pod)->name && (*pod)->namespace_) {
    const std::string& ns = *(*pod)->namespace_;
    out.pod_label.assign(cut(ns, kPodTextMax))
        .append("/")
        .append(cut(*(*pod)->name, kPodTextMax));
    out.pod_key.assign("p:").append(out.pod_label);
    out.namespace_key.assign("n:").append(cut(ns, kPodTextMax));
    out.namespace_label.assign(cut(ns, kPodTextMax));
  } else if (pod && *pod) {
    const std::string uid = (*pod)->uid.value_or("?").substr(0, kPodTextMax);
    out.pod_key.assign("p:uid:").append(uid);
    out.pod_label.assign("pod ").append(uid);
    out.namespace_key.assign("n:?");
    out.namespace_label.assign("(unknown namespace)");
  } else {
    out.pod_key.assign("p:");
    out.pod_label.assign("(no pod)");
    out.namespace_key.assign("n:");
    out.namespace_label.assign("(no pod)");
  }
}

}  // namespace gd::accounting
