// Structured logs to stderr (journald picks them up): logfmt lines
//   ts=2024-11-22T10:00:00.123Z level=info msg="listening" addr=127.0.0.1:9856
#pragma once

#include <string>
#include <string_view>

namespace gd::serve_log {

// Points spdlog's default logger at stderr with the logfmt pattern.
void setup();

// A logfmt value: bare if it has no space, quote, '=' or control
// character, else double-quoted with \" \\ \n escaped.
std::string q(std::string_view value);

}  // namespace gd::serve_log
