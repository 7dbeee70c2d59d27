// How a Slurm job reads wherever gpudoctor names one: "slurm 1234
// train-llm (alice, gpu-a)", or "slurm 1234" while its name is unknown
// (scontrol slow or absent). Raw text: the name is the job's own choice,
// so every terminal view passes it through common/terminal_text.h.
#pragma once

#include <optional>
#include <string>

#include "model/sample.h"

namespace gd {

std::string slurm_job_label(const std::string& id, const SlurmJob* job);
// With the name from s.slurm_jobs.
std::string slurm_job_label(const Sample& s, const std::string& id);
// "" when `id` is nullopt.
std::string slurm_job_label(const Sample& s,
                            const std::optional<std::string>& id);

}  // namespace gd
