// The one URL parser of gpudoctor's HTTP clients (client.h): top --connect,
// ps and diagnose asking serve, serve posting to Alertmanager.
#pragma once

#include <stdexcept>
#include <string>

namespace gd::http {

// A URL is read up to this many characters: anything longer is refused.
inline constexpr size_t kMaxUrlChars = 2048;

struct Url {
  std::string text;              // as given, for messages
  std::string scheme_host_port;  // "http://127.0.0.1:9856", "https://[::1]"
  bool https = false;
  std::string host;  // "127.0.0.1", "::1" (no brackets), "gpu07"
  int port = 0;      // as given, else 80 or 443
  // "" or "/gd" (a reverse proxy's prefix): requests' paths follow it. No
  // slash at the end.
  std::string path;
  std::string query;  // after '?', "" none
};

// Parses http[s]://host[:port][/path][?query]; throws std::invalid_argument
// with one line, "'URL': why" (no user info: credentials go in files, not in
// URLs that end up in ps and logs; no fragment; a port in 1..65535; no
// spaces or control characters).
Url parse_url(const std::string& text);

}  // namespace gd::http
