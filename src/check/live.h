// check on this machine: one sample through the Sampler (NVML reads off the
// caller's thread, each GPU within the deadline), the kernel log since boot,
// the holders of the NVIDIA device files, and the GPUs asked for.
#pragma once

#include <string>
#include <vector>

#include "check/check.h"
#include "collect/sampler.h"

namespace gd::check {

struct LiveCheck {
  TraceHeader header;
  Sample sample;
  Input input;  // points into header and sample: do not copy a LiveCheck
  // Why the GPUs could not be checked ("" when they could): NVML did not
  // start (other than a driver/library mismatch, which is a finding).
  std::string could_not_check;
  LiveCheck() = default;
  LiveCheck(const LiveCheck&) = delete;
  LiveCheck& operator=(const LiveCheck&) = delete;
};

// `gpus`: the --gpus entries (empty = every GPU), each valid by
// check_gpu_name (model/gpu_lookup.h); `node_only` (--gpus none): no job's
// GPUs, `gpus` must be empty. The kernel log is read from its start (since
// boot).
void check_live(const SamplerOptions& options,
                const std::vector<std::string>& gpus, LiveCheck& out,
                bool node_only = false);

}  // namespace gd::check
