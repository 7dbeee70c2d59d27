// `gpudoctor check`: its result (check/check.h) as a short text report,
// JSON, and the one-line reason a Slurm drain or a node condition carries.
#pragma once

#include <string>

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
// the worst finding (a kernel-log event with its time, UTC), at most
// kCheckReasonMax bytes of printable ASCII with no double quote; "" when
// healthy.
std::string check_reason(const check::Result& r, const TraceHeader& header);
inline constexpr size_t kCheckReasonMax = 200;

}  // namespace gd
