// Caps on untrusted strings where they are read (/proc, the kernel log), so
// a 1 MiB command line costs 4 KiB wherever it is kept afterwards.
#pragma once

#include <cstddef>
#include <string>

namespace gd {

// Longest per-process string kept (command line, comm, user, cgroup path)
// and longest kernel-log line kept, in bytes before the marker.
inline constexpr size_t kProcessTextMax = 4096;
inline constexpr size_t kKernelLineMax = 4096;

// Cuts `text` to at most `max_bytes` (backing off so no UTF-8 character is
// split) and appends "…[truncated N bytes]", N counting the bytes cut here
// plus `already_left_out` (bytes the caller never read). Text that fits and
// has nothing left out is unchanged.
void cap_text(std::string& text, size_t max_bytes, size_t already_left_out = 0);

}  // namespace gd
