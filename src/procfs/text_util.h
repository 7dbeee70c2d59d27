// Small, allocation-free helpers for parsing /proc text: reading a file into
// a reused buffer with open/read, splitting into lines and fields, and
// parsing numbers without locale or exceptions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gd::procfs {

// Reads the whole file at `path` into `out` (replacing its contents, keeping
// its capacity). Returns false when the file cannot be opened or read.
bool read_file(const char* path, std::string& out);
inline bool read_file(const std::string& path, std::string& out) {
  return read_file(path.c_str(), out);
}

// Pops the next line (without its '\n') from `text`; false at the end.
bool next_line(std::string_view& text, std::string_view& line);

// Pops the next run of non-blank characters (blank = space, tab, newline).
// Returns an empty view when none is left.
std::string_view next_field(std::string_view& text);

std::string_view trim(std::string_view s);

std::optional<uint64_t> parse_u64(std::string_view s);
std::optional<int64_t> parse_i64(std::string_view s);
std::optional<double> parse_double(std::string_view s);

// "Key:   123 kB" style lines: if `line` starts with `key` followed by ':',
// returns the text after the colon.
std::optional<std::string_view> value_after_key(std::string_view line,
                                                std::string_view key);

}  // namespace gd::procfs
