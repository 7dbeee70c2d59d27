// ASCII-only text helpers: the one trim and the one case fold. Everything
// they see (HTTP headers, /proc and /sys files, kernel lines, config) is
// ASCII where it matters, and a locale must never change how a header or a
// kernel line is read, so none of these consult the C locale.
#pragma once

#include <string>
#include <string_view>

namespace gd {

// `s` without leading and trailing spaces, tabs, CRs and LFs.
std::string_view trim(std::string_view s);

// `s` without leading spaces and tabs.
std::string_view trim_left(std::string_view s);

// `s` with A-Z folded to a-z; other bytes unchanged.
std::string ascii_lower(std::string_view s);

// Whether `a` equals `b`, A-Z and a-z alike.
bool iequals(std::string_view a, std::string_view b);

// Whether `part` occurs in `s`, A-Z and a-z alike (an empty part does).
bool icontains(std::string_view s, std::string_view part);

}  // namespace gd
