#include "api/error_json.h"

#include <stdexcept>

#include "api/json_read.h"
#include "trace/json_out.h"

namespace gd::api {

namespace {
constexpr size_t kMaxMessageBytes = 1024;
}  // namespace

std::string error_json(std::string_view message) {
  std::string out;
  json_out::lit(out, "{\"error\":");
  json_out::string(out, message);
  out += '}';
  return out;
}

std::optional<std::string> parse_error_json(std::string_view body) {
  try {
    nlohmann::json j = parse_object(body, "error");
    std::string message = text_or_empty(j, "error", kMaxMessageBytes, "error");
    if (message.empty()) return std::nullopt;
    return message;
  } catch (const std::runtime_error&) {
    return std::nullopt;
  }
}

}  // namespace gd::api
