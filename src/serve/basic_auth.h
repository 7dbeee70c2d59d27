// HTTP basic auth against bcrypt hashes (--web-config basic_auth_users),
// checked with libxcrypt's crypt_rn. bcrypt is slow on purpose (tens of ms
// per check) and anyone can ask for one, so the HTTP server runs checks on
// a pool of their own (fair_pool.h, one thread), and this remembers header
// values that passed and ones that failed: a scraper with a good password
// costs one check, one hammering a wrong one (an old password after a
// rotation, or an attacker) costs one check too.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace gd {

// "Basic dXNlcjpwYXNz" -> ("user", "pass"); nullopt when malformed, or
// when either holds a NUL byte (crypt_rn would stop reading the password
// there, so "secret\0junk" would pass for "secret").
std::optional<std::pair<std::string, std::string>> parse_basic_auth(
    std::string_view header);

class BasicAuth {
 public:
  explicit BasicAuth(std::map<std::string, std::string> users);
  bool enabled() const { return !users_.empty(); }
  // What check() said of `header` the last time, if it is remembered, and
  // false for a malformed header (cheap; event loop). A false counts as a
  // failure.
  std::optional<bool> known(std::string_view header);
  // Runs bcrypt (slow; off the event loop).
  bool check(std::string_view header);
  // A check not run because too many were waiting (the caller answers
  // 503).
  void note_refused();

  // For /metrics: failures (wrong or unknown user or password, malformed
  // header; remembered ones included) and checks refused.
  struct Counts {
    uint64_t failures = 0;
    uint64_t refused = 0;
  };
  Counts counts() const;

 private:
  std::map<std::string, std::string> users_;
  mutable std::mutex mu_;
  std::set<std::string> good_;  // bounded: cleared when full
  std::set<std::string> bad_;   // bounded: cleared when full
  Counts counts_;
};

}  // namespace gd
