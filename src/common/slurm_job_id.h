// The Slurm job a process belongs to, from its /proc/PID/cgroup or
// /proc/PID/environ. Both are the host's text (a job can name its own
// nested cgroups and set its own environment), so the parse is strict and
// bounded: a job id is 1..10 decimal digits (Slurm's ids are 32-bit), and
// only a component placed where Slurm puts it counts.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gd {

// Longest job id kept: Slurm's job ids are uint32 (at most 10 digits).
inline constexpr size_t kSlurmJobIdMax = 10;

// The job id in one cgroup path. A component "job_<id>" counts when Slurm's
// layout surrounds it: after "uid_<n>" (cgroup v1, "/slurm/uid_U/job_J/
// step_S"), after a component ending in "slurmstepd.scope" (cgroup v2,
// "/system.slice/slurmstepd.scope/job_J/step_S", or "<node>_slurmstepd.scope"
// with several slurmd), or before a "step_<...>" component. The outermost
// such component wins: a job may create cgroups inside its own (a delegated
// v2 subtree), and must not pass for another job. nullopt: none.
std::optional<std::string> slurm_job_in_cgroup_path(std::string_view path);

// The job id in the text of /proc/PID/cgroup ("id:controllers:path" lines):
// every line is looked at (on a hybrid v1/v2 host the job shows on a v1
// hierarchy's line, e.g. freezer or devices, not on the v2 line); the first
// line naming a job wins. Lines without two ':' are skipped.
std::optional<std::string> slurm_job_in_cgroup_file(std::string_view text);

// SLURM_JOB_ID in the NUL-separated text of /proc/PID/environ (the first
// such entry, as getenv would find it); nullopt when absent or not 1..10
// digits.
std::optional<std::string> slurm_job_in_environ(std::string_view environ);

// True for 1..kSlurmJobIdMax ASCII digits (what the parsers above return).
bool is_slurm_job_id(std::string_view id);

}  // namespace gd
