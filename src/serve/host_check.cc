#include "serve/host_check.h"

#include <arpa/inet.h>

#include <algorithm>
#include <stdexcept>

#include "common/ascii_text.h"

namespace gd {
namespace {

bool is_digits(std::string_view s) {
  return !s.empty() && s.size() <= 5 &&
         std::all_of(s.begin(), s.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_';
}

bool is_v6_char(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == ':' ||
         c == '.';
}

// A bare name or address as given to --allowed-host or left of the port.
std::optional<std::string> clean_name(std::string_view raw, bool bracketed) {
  std::string name = ascii_lower(raw);
  if (bracketed) {  // an IPv6 address, kept as written (lower case)
    in6_addr v6{};
    if (!std::all_of(name.begin(), name.end(), is_v6_char) ||
        inet_pton(AF_INET6, name.c_str(), &v6) != 1)
      return std::nullopt;
    return name;
  }
  // One trailing dot is the absolute form of the same name; empty labels
  // (leading dot, "..") make no name.
  if (name.find("..") != std::string::npos) return std::nullopt;
  if (!name.empty() && name.back() == '.') name.pop_back();
  if (name.empty() || name.front() == '.' || name.size() > 253 ||
      !std::all_of(name.begin(), name.end(), is_name_char))
    return std::nullopt;
  return name;
}

}  // namespace

bool is_loopback_name(std::string_view name) {
  if (name == "localhost") return true;
  const std::string text(name);
  in_addr v4{};
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1)
    return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (inet_pton(AF_INET6, text.c_str(), &v6) == 1) {
    if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
    return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
  }
  return false;
}

std::optional<std::string> host_header_name(std::string_view header) {
  if (header.empty()) return std::nullopt;
  if (header.front() == '[') {
    const auto close = header.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    const std::string_view rest = header.substr(close + 1);
    if (!rest.empty() && (rest.front() != ':' || !is_digits(rest.substr(1))))
      return std::nullopt;
    return clean_name(header.substr(1, close - 1), true);
  }
  const auto colon = header.find(':');
  if (colon != std::string_view::npos && !is_digits(header.substr(colon + 1)))
    return std::nullopt;
  return clean_name(header.substr(0, colon), false);
}

HostPolicy host_policy_for(const std::string& listen_host,
                           const std::vector<std::string>& allowed) {
  HostPolicy p;
  for (const auto& a : allowed) {
    if (a == "*") {
      p.any = true;
      continue;
    }
    const bool bracketed = a.size() > 2 && a.front() == '[' && a.back() == ']';
    const bool v6 = !bracketed && a.find(':') != std::string::npos;
    auto name = bracketed ? clean_name(a.substr(1, a.size() - 2), true)
                          : clean_name(a, v6);
    if (!name)
      throw std::invalid_argument("--allowed-host: '" + a +
                                  "' is not a host name or address");
    p.names.push_back(*name);
  }
  std::string listen = listen_host;
  if (listen.size() > 2 && listen.front() == '[')
    listen = listen.substr(1, listen.size() - 2);
  if (allowed.empty() && !is_loopback_name(ascii_lower(listen))) p.any = true;
  return p;
}

bool host_allowed(const HostPolicy& policy,
                  std::optional<std::string_view> header) {
  if (policy.any || !header) return true;
  const auto name = host_header_name(*header);
  if (!name) return false;
  if (is_loopback_name(*name)) return true;
  return std::find(policy.names.begin(), policy.names.end(), *name) !=
         policy.names.end();
}

}  // namespace gd
