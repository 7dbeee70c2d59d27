// Small, allocation-free helpers for parsing /proc text: reading a file into
// a reused buffer with open/read, splitting into lines and fields, and
// parsing numbers without locale or exceptions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gd::procfs {

// How the end of a file's text is found, to save the extra read that
// returns 0 (a syscall per file per sample):
//  kShortRead     procfs prints /proc/PID/stat, schedstat, loadavg ... with
//                 one show() call, and a read with room for the whole text
//                 returns all of it: a short read is the end.
//  kShortPidList  /proc/PID/task/TID/children is one record per pid, and a
//                 read stops early when the next record does not fit in
//                 procfs's page-sized buffer. A read that left room for
//                 another pid ("4194304 ") in that page has reached the end.
//                 The extra read would walk the whole child list again.
//  kZeroRead      anything else: read until a read returns 0.
enum class Ending { kShortRead, kShortPidList, kZeroRead };

// Appends the text of the open file `fd`, from offset 0, to `out`. False on
// a read error (ESRCH once a /proc/PID file's process is gone).
bool read_from_start(int fd, std::string& out, Ending ending);

// Reads the whole file at `path` into `out` (replacing its contents, keeping
// its capacity). Returns false when the file cannot be opened or read.
bool read_file(const char* path, std::string& out,
               Ending ending = Ending::kZeroRead);
inline bool read_file(const std::string& path, std::string& out) {
  return read_file(path.c_str(), out);
}

// Reads at most `max_bytes` of the file at `path` into `out` (replacing its
// contents) and sets `left_out` to the bytes after them, counted by reading
// on in small chunks that are thrown away: a 1 MiB /proc/PID/cmdline never
// sits in memory. Returns false when the file cannot be opened or read.
bool read_file_prefix(const char* path, std::string& out, size_t max_bytes,
                      size_t& left_out);

// Reads at most `max_bytes` of the file at `path` into `out` (replacing its
// contents) and nothing after them: for files whose tail does not matter
// (/proc/PID/environ). False when the file cannot be opened or read.
bool read_file_head(const char* path, std::string& out, size_t max_bytes);

// Pops the next line (without its '\n') from `text`; false at the end.
bool next_line(std::string_view& text, std::string_view& line);

// Pops the next run of non-blank characters (blank = space, tab, newline).
// Returns an empty view when none is left.
std::string_view next_field(std::string_view& text);

std::optional<uint64_t> parse_u64(std::string_view s);
// A /proc directory entry that is a pid ("1234"), or nullopt.
std::optional<uint32_t> pid_of_entry(const char* name);
std::optional<int64_t> parse_i64(std::string_view s);
// A finite number >= 0 (loads and PSI shares), else nullopt.
std::optional<double> parse_double(std::string_view s);

// "Key:   123 kB" style lines: if `line` starts with `key` followed by ':',
// returns the text after the colon.
std::optional<std::string_view> value_after_key(std::string_view line,
                                                std::string_view key);

}  // namespace gd::procfs
