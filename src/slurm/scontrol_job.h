// `scontrol show job -o ID`: one line per job of "Key=Value" fields joined
// by spaces. Values are the cluster's text and some may hold spaces
// (JobName, Comment, Command, WorkDir, StdOut), so the line cannot be split
// on spaces. What is read, and how:
//  - JobId: digits after "JobId=" at the line's start;
//  - JobName: everything between "JobName=" and the first
//    " UserId=<name>(<uid digits>) GroupId=" after it (Slurm prints UserId
//    and GroupId right after the name, with the uid in parentheses); a name
//    that itself contains that exact pattern is cut at it;
//  - UserId: the name before "(<uid>)";
//  - Partition, StartTime: the first " Partition=" / " StartTime=" after
//    GroupId (the fields between hold Slurm's own words, account and QOS
//    names, not free text), up to the next space.
// Every string is capped (model/sample.h); nothing else is trusted.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "model/sample.h"

namespace gd::slurm {

struct ScontrolJob {
  SlurmJob job;
  // StartTime as Unix seconds; nullopt when absent, "Unknown" or not a
  // time. Slurm prints local time ("2026-12-02T05:00:00"), read with the
  // local time zone.
  std::optional<double> start_time;
  std::string state;  // JobState (RUNNING, COMPLETING, ...), capped
};

// The line of `output` for job `id`; nullopt when no line is that job's or
// the line is malformed.
std::optional<ScontrolJob> parse_scontrol_job(std::string_view output,
                                              std::string_view id);

// "2026-12-02T05:00:00" in the local time zone -> Unix seconds.
std::optional<double> parse_slurm_time(std::string_view text);

}  // namespace gd::slurm
