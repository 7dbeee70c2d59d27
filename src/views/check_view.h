// `gpudoctor check`: its result (check/check.h) as a short text report,
// JSON, and the one-line reason a Slurm drain or a node condition carries.
#pragma once

#include <string>
#include <string_view>

#include "check/check.h"

namespace gd {

// The verdict, each finding (title, evidence, action), what was not judged.
std::string format_check_text(const check::Result& r,
                              const TraceHeader& header);
// {"healthy", "status", "exit_code", "gpus", "findings" (findings.md's
// shape, each with "reason"), "not_judged", "checked", "reason"}.
std::string format_check_json(const check::Result& r,
                              const TraceHeader& header);
// "gpudoctor: GPU 5 00000000:9A:00.0 Xid 79 (it fell off the bus) 12:03:11",
// the worst finding (a kernel-log event with its time, UTC), at most `max`
// bytes (kCheckLineMin or more) of printable ASCII with no double quote;
// "" when healthy.
inline constexpr size_t kCheckReasonMax = 200;
inline constexpr size_t kCheckLineMin = 40;
std::string check_reason(const check::Result& r, const TraceHeader& header,
                         size_t max = kCheckReasonMax);

// node-problem-detector's custom-plugin protocol: the exit status (0 OK, 1
// a problem, 2 unknown) and the one line of at most `max` bytes that
// becomes the node condition's message. A problem is a critical finding, or
// any finding when `warnings_are_problems`.
struct NpdVerdict {
  int exit_status = 0;
  std::string message;
};
inline constexpr int kNpdOk = 0;
inline constexpr int kNpdProblem = 1;
inline constexpr int kNpdUnknown = 2;
// node-problem-detector's default max_output_length.
inline constexpr size_t kNpdMessageMax = 80;
NpdVerdict check_npd(const check::Result& r, const TraceHeader& header,
                     size_t max, bool warnings_are_problems);
// Unknown: the GPUs could not be checked (`why`, from check_live).
NpdVerdict check_npd_unknown(std::string_view why, size_t max);

}  // namespace gd
