#include "serve/log.h"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace gd::serve_log {

void setup() {
  static bool done = false;
  if (done) return;
  done = true;
  auto logger = spdlog::stderr_logger_mt("gpudoctor");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("ts=%Y-%m-%dT%H:%M:%S.%eZ level=%l %v",
                      spdlog::pattern_time_type::utc);
  spdlog::flush_on(spdlog::level::info);
}

std::string q(std::string_view value) {
  bool bare = !value.empty();
  for (char c : value)
    if (c == ' ' || c == '"' || c == '=' || c == '\\' ||
        static_cast<unsigned char>(c) < 0x20)
      bare = false;
  if (bare) return std::string(value);
  std::string out = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace gd::serve_log
