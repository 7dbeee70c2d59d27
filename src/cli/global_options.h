// Flags shared by every subcommand (gpudoctor --nvml-lib PATH status ...).
#pragma once

#include <string>

#include "collect/sampler.h"

namespace gd {

struct GlobalOptions {
  std::string nvml_lib = "libnvidia-ml.so.1";
  double interval_s = 1.0;      // sampling interval
  bool interval_given = false;  // --interval was on the command line
  double deadline_s = 1.0;      // per-GPU NVML read deadline
  double slow_reads_s =         // refresh of the costly NVML reads
      std::chrono::duration<double>(SamplerOptions{}.slow_read_interval)
          .count();
  std::string proc_root = "/proc";  // for fixture tests
  std::string sys_root = "/sys";
  std::string kmsg_path = "/dev/kmsg";  // kernel log; "" or "none" disables
  std::string dev_prefix = "/dev";      // NVIDIA device nodes (tests)

  SamplerOptions sampler_options() const;
};

}  // namespace gd
