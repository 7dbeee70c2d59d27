// Who a GPU process belongs to, found without configuration: its job (a
// Slurm job id in its cgroup path, else the project's job grouping of
// ranks under their launcher, model/process_tree.h), its user, its
// container (common/container_ref.h) and its Kubernetes pod and namespace
// (the sample's ProcessSample::pod).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "model/process_tree.h"

namespace gd::accounting {

inline constexpr size_t kJobCommandMax = 40;

struct OwnerKeys {
  std::string job_key, job_label;
  std::string user_key, user_label;
  std::string container_key, container_label;
  std::string pod_key, pod_label;
  std::string namespace_key, namespace_label;
};

// Fills `out` (reusing its strings) for GPU process `pid` of `tree`'s
// sample. A Slurm job (the process's slurm_job_id, else its job group's,
// else the one its cgroup path names, for traces written before that field)
// reads "slurm 1234 train-llm (alice, gpu-a)" (model/slurm_label.h); any
// other job reads as its launcher's (the job group's) command line, its
// secrets redacted (common/redact.h), cut to kJobCommandMax bytes, and pid:
// "torchrun --nproc 8 train.py (pid 1001)".
void owner_of(const ProcessTree& tree, uint32_t pid, OwnerKeys& out);

}  // namespace gd::accounting
