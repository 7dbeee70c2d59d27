// Who a GPU process belongs to, found without configuration: its job (a
// Slurm job id in its cgroup path, else the project's job grouping of
// ranks under their launcher, model/process_tree.h), its user and its
// container (common/container_ref.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "model/process_tree.h"

namespace gd::accounting {

struct OwnerKeys {
  std::string job_key, job_label;
  std::string user_key, user_label;
  std::string container_key, container_label;
};

// The Slurm job id in a cgroup path ("/system.slice/slurmstepd.scope/
// job_1234/step_0/...", cgroup v1 "/slurm/uid_1000/job_1234/..."); nullopt
// when it names none.
std::optional<uint64_t> slurm_job_id(std::string_view cgroup);

// Fills `out` (reusing its strings) for GPU process `pid` of `tree`'s
// sample.
void owner_of(const ProcessTree& tree, uint32_t pid, OwnerKeys& out);

}  // namespace gd::accounting
