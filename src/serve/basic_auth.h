// HTTP basic auth against bcrypt hashes (--web-config basic_auth_users),
// checked with libxcrypt's crypt_rn. bcrypt is slow on purpose (tens of ms
// per check), so the HTTP server runs unknown credentials on its slow pool
// and remembers a few that passed (by the exact header value).
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace gd {

// "Basic dXNlcjpwYXNz" -> ("user", "pass"); nullopt when malformed.
std::optional<std::pair<std::string, std::string>> parse_basic_auth(
    std::string_view header);

class BasicAuth {
 public:
  explicit BasicAuth(std::map<std::string, std::string> users);
  bool enabled() const { return !users_.empty(); }
  // True when `header` passed check() before (cheap; event loop).
  bool known_good(std::string_view header) const;
  // Runs bcrypt (slow; off the event loop).
  bool check(std::string_view header);

 private:
  std::map<std::string, std::string> users_;
  mutable std::mutex mu_;
  std::set<std::string> good_;  // bounded: cleared when full
};

}  // namespace gd
