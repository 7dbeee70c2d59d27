// Which Host headers `serve` answers. A DNS-rebinding page makes a browser
// send requests to 127.0.0.1 under the attacker's name (Host: evil.example);
// answering only loopback names on a loopback listener makes such a page
// unable to read the API. Loopback names are always accepted: a browser
// sends Host: localhost only for a page that itself came from localhost.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gd {

struct HostPolicy {
  bool any = false;                // every Host header is accepted
  std::vector<std::string> names;  // lower case, no port, no brackets
};

// Listening on a loopback address: loopback names plus `allowed`.
// Elsewhere: any Host when `allowed` is empty, else loopback names plus
// `allowed`. "*" in `allowed` accepts any Host. Throws std::invalid_argument
// naming a NAME that is not a host name or address.
HostPolicy host_policy_for(const std::string& listen_host,
                           const std::vector<std::string>& allowed);

// 127.0.0.0/8, ::1, ::ffff:127.x.y.z or "localhost" (no port, no brackets).
bool is_loopback_name(std::string_view name);

// The lower-case name of a Host header ("Name:8080", "[::1]:9856", "name.")
// without port, brackets or trailing dot; nullopt when malformed.
std::optional<std::string> host_header_name(std::string_view header);

// A request without a Host header (HTTP/1.0) is accepted: browsers always
// send one, so it cannot come from a rebinding page.
bool host_allowed(const HostPolicy& policy,
                  std::optional<std::string_view> header);

}  // namespace gd
