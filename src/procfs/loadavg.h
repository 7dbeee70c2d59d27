// /proc/loadavg: "0.52 0.58 0.59 2/345 12345" -> the 1-minute load, and
// the last pid allocated.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace gd::procfs {

std::optional<double> parse_loadavg1(std::string_view text);

// The last field: the pid most recently allocated in the reader's pid
// namespace (a counter that only moves on fork or thread creation, until
// it wraps at pid_max).
std::optional<uint64_t> parse_loadavg_last_pid(std::string_view text);

}  // namespace gd::procfs
