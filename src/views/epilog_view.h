// `gpudoctor epilog`: its decisions as text (one line each, for a person
// or syslog) and as JSON.
#pragma once

#include <string>
#include <vector>

#include "procmgmt/epilog.h"

namespace gd {

struct EpilogReport {
  std::string job_id;
  procmgmt::EpilogSelection selection;
  std::vector<std::string> kill_steps;  // as the kill session told them
  std::vector<procmgmt::EpilogGpu> gpus;
  bool memory_back = true;
  std::string reason;  // "" when memory is back
};

// One line per decision: "job 77: ending pid 4242 (python train.py): in
// the job's cgroup", "job 77: GPU 0: memory back (300 MiB used)".
std::string render_epilog(const EpilogReport& r);
std::string epilog_to_json(const EpilogReport& r);

}  // namespace gd
