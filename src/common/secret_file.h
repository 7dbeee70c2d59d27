// A secret kept in a file (a bearer token, a password, "user:password"):
// its first line, read with a size bound (a path to /dev/zero or a huge file
// cannot fill memory), refused when it holds a control byte (a bare CR or
// an LF-less NUL in a token would go into a request header as it is).
#pragma once

#include <cstddef>
#include <string>

namespace gd {

// The longest first line of a secret's file, in bytes.
inline constexpr size_t kMaxSecretLineBytes = 4096;

// The first line of `path` without its line end ("\n" or "\r\n"). Throws
// std::invalid_argument with one line (naming `path`) when the file cannot
// be read, the line is empty, longer than kMaxSecretLineBytes, or holds a
// control byte (C0 or DEL).
std::string read_secret_line(const std::string& path);

}  // namespace gd
