// GET /api/v1/processes (docs/serve.md): the GPU processes of the newest
// sample joined with /proc (user, command, job, children), and who probably
// holds memory whose owner is gone. Written by serve from its snapshot; read
// by whoever audits a node (and the fuzz harness).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/sample.h"

namespace gd::api {

struct ProcessJob {
  uint32_t pid = 0;  // the job group (launcher, or the rank itself)
  std::string name;  // "" when /proc does not have it
  uint64_t ranks = 0;
};

struct ProcessChild {
  uint32_t pid = 0;
  std::string name, state;
  std::optional<double> cpu_pct;
};

struct ProcessRow {
  int gpu = 0;
  uint32_t pid = 0;
  std::optional<uint64_t> used_bytes;
  std::string type;
  // False when /proc does not have the pid: then only "state" ("unknown") is
  // sent of the fields below.
  bool in_proc = false;
  std::optional<uint32_t> ppid;
  std::string user, name, cmdline, state;
  std::optional<double> cpu_pct;
  std::optional<int> threads;
  std::optional<uint64_t> rss_bytes;
  std::optional<double> start_time;
  std::optional<std::string> cgroup;
  // Its Slurm job (sent only when known): the id, and the name, user and
  // partition ("" while scontrol has not told).
  std::optional<std::string> slurm_job_id;
  std::string slurm_job_name, slurm_job_user, slurm_job_partition;
  std::optional<ProcessPod> pod;  // sent only when in a pod
  ProcessJob job;
  std::vector<ProcessChild> children;
};

// model/orphan_holders.h's probable holder, as serve names it.
struct OrphanHolderEntry {
  int gpu = 0;
  uint32_t pid = 0;
  std::optional<std::string> user, name, cmdline;  // null: not in /proc
  std::vector<uint32_t> dead_owners;
  std::vector<std::string> evidence;
  std::string action;  // "gpudoctor kill PID"
};

struct ProcessesReply {
  std::optional<double> t;  // null before the first sample
  // Absent (nullopt) before the first sample.
  std::optional<std::vector<OrphanHolderEntry>> orphan_holders;
  std::vector<ProcessRow> processes;
};

std::string processes_json(const ProcessesReply& r);

// Throws std::runtime_error with one line naming what is wrong. Texts are
// cut to 64 KiB; at most 100,000 processes, children, holders and pids per
// list, GPUs 0..1023, pids 0..4194304.
ProcessesReply parse_processes_json(std::string_view body);

}  // namespace gd::api
