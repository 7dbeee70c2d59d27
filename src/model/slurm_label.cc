#include "model/slurm_label.h"

namespace gd {

std::string slurm_job_label(const std::string& id, const SlurmJob* job) {
  std::string out = "slurm " + id;
  if (!job) return out;
  if (!job->name.empty()) out += " " + job->name;
  std::string who = job->user;
  if (!job->partition.empty())
    who += (who.empty() ? "" : ", ") + job->partition;
  if (!who.empty()) out += " (" + who + ")";
  return out;
}

std::string slurm_job_label(const Sample& s, const std::string& id) {
  return slurm_job_label(id, find_slurm_job(s, id));
}

std::string slurm_job_label(const Sample& s,
                            const std::optional<std::string>& id) {
  return id ? slurm_job_label(s, *id) : std::string();
}

}  // namespace gd
