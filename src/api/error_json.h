// Every error serve answers (4xx, 5xx): {"error": "one line"}. Written by
// serve's handlers; read by clients to show the reason.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gd::api {

std::string error_json(std::string_view message);

// The message of an error reply, cut to 1024 bytes; nullopt when `body` is
// not one (not JSON, not an object, no string "error").
std::optional<std::string> parse_error_json(std::string_view body);

}  // namespace gd::api
