// `gpudoctor check`: the health gate of a prolog. Judges what one point in
// time (one sample, the kernel log since boot or --since, the holders of the
// device files) can tell about the GPUs, and lists what it could not judge.
// The window rules of diagnose that are sound on one sample run here on it
// (one_sample_rules.cc); what needs a different reading on one sample is a
// judge of check's own, one per file in judges/.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "diagnose/engine.h"
#include "diagnose/rule.h"
#include "model/sample.h"

namespace gd::check {

// Exit codes (docs/check.md).
inline constexpr int kExitHealthy = 0;
inline constexpr int kExitWarnings = 1;
inline constexpr int kExitUnhealthy = 2;
inline constexpr int kExitCouldNotCheck = 3;
inline constexpr int kExitUsage = 64;  // EX_USAGE of sysexits.h

// A process holding NVIDIA device files open (procmgmt's scan), with who
// it is.
struct Holder {
  uint32_t pid = 0;
  std::string user, name;            // "" unknown
  std::vector<std::string> devices;  // "nvidia5", "nvidia-uvm"
  std::vector<std::string> libs;     // CUDA libraries it maps
};

struct Input {
  const TraceHeader* header = nullptr;
  const Sample* sample = nullptr;
  // The GPUs to judge clean (NVML indexes); every GPU when `all_gpus`.
  std::vector<int> gpus;
  bool all_gpus = true;
  // `--gpus none`: a node's health, not a job's gate (a node-problem-detector
  // plugin, a periodic health check). No GPU need be free; the judges that
  // ask about the job's GPUs (Judge::about_job_gpus) do not run.
  bool node_only = false;
  // --gpus entries NVML does not list (an index past the last, a UUID of
  // no GPU here): a GPU the job was promised is missing.
  std::vector<std::string> absent;
  // Holders of device files; nullopt = not scanned.
  std::optional<std::vector<Holder>> holders;
  std::vector<uint32_t> unreadable_fd_pids;
  double deadline_s = 1;  // of one GPU's NVML reads
};

// One finding with the short phrase a drain reason uses ("Xid 79 (it fell
// off the bus)", "pid 5200 (python3, alice) holds it").
struct CheckFinding {
  Finding finding;
  std::string brief;
  // When the kernel logged the event behind it (Unix s; 0 = not an event
  // or its line had no stamp): the drain reason ends with it.
  double logged_at = 0;
};

struct Result {
  // Unhealthy (critical) first, then warnings; by GPU, id.
  std::vector<CheckFinding> findings;
  std::vector<NotJudged> not_judged;
  std::vector<std::string> checked;  // ids of what was looked at
  std::vector<int> gpus;             // the GPUs judged clean or not
  bool node_only = false;            // Input::node_only: no job's GPUs
  bool healthy() const;              // no finding of any kind
  int exit_code() const;             // 0, 1 or 2
};

Result judge(const Input& in);

// One judge of check's own: reads the input, adds findings and the reasons
// it could not judge. The table is judge_table.cc.
struct Judge {
  const char* id;
  void (*run)(const Input& in, std::vector<CheckFinding>& out,
              std::vector<NotJudged>& not_judged);
  bool about_job_gpus = false;  // skipped (not "checked") when node_only
};
const std::vector<Judge>& judge_table();

// The rules of diagnose that judge one sample soundly, their findings with
// the severity check gives them (one_sample_rules.cc).
void run_one_sample_rules(const Input& in, std::vector<CheckFinding>& out,
                          std::vector<NotJudged>& not_judged,
                          std::vector<std::string>& checked);

// A GPU the input says is idle enough for the idle judges: utilisation
// known and at most 5%.
bool idle(const GpuSample& g);

}  // namespace gd::check
