#include "serve/basic_auth.h"

#include <crypt.h>
#include <sys/random.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "common/random_fill.h"

namespace gd {
namespace {

// Header values remembered as good; a handful of scrapers and browsers.
constexpr size_t kMaxRemembered = 64;
// Header values remembered as failed: a few misconfigured scrapers
// retrying an old password. At most 4 KiB each (parse_basic_auth), so at
// most 1 MiB; an attacker who varies the password only pushes the others
// out, and is slowed by the check pool instead.
constexpr size_t kMaxRememberedBad = 256;
// Compared against when the user is unknown, so that a wrong name takes as
// long as a wrong password (cost 10, like htpasswd -B).
constexpr const char* kDummyHash =
    "$2y$10$8Jd7i2m3M7Q6h0mB6r4G2OvC3rA0m0iJ1m6fYvJ8qz3o9a1b2c3dE";

int b64(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

std::optional<std::string> base64_decode(std::string_view in) {
  while (!in.empty() && in.back() == '=') in.remove_suffix(1);
  std::string out;
  unsigned acc = 0;
  int bits = 0;
  for (char c : in) {
    const int v = b64(c);
    if (v < 0) return std::nullopt;
    acc = (acc << 6) | static_cast<unsigned>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return out;
}

bool same(const std::string& a, const char* b) {
  const size_t n = std::strlen(b);
  if (a.size() != n) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < n; ++i)
    diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace

std::optional<std::pair<std::string, std::string>> parse_basic_auth(
    std::string_view header) {
  constexpr std::string_view kScheme = "Basic ";
  if (header.size() <= kScheme.size() || header.size() > 4096)
    return std::nullopt;
  for (size_t i = 0; i < kScheme.size(); ++i)
    if ((header[i] | 0x20) != (kScheme[i] | 0x20)) return std::nullopt;
  auto decoded = base64_decode(header.substr(kScheme.size()));
  if (!decoded) return std::nullopt;
  if (decoded->find('\0') != std::string::npos) return std::nullopt;
  const auto colon = decoded->find(':');
  if (colon == std::string::npos) return std::nullopt;
  return std::make_pair(decoded->substr(0, colon), decoded->substr(colon + 1));
}

BasicAuth::BasicAuth(std::map<std::string, std::string> users)
    : users_(std::move(users)) {}

std::optional<bool> BasicAuth::known(std::string_view header) {
  // A malformed header needs no check: parsing it is cheap.
  const bool malformed = !parse_basic_auth(header);
  const std::string key(header);
  std::lock_guard lock(mu_);
  if (!malformed && good_.count(key)) return true;
  if (!malformed && !bad_.count(key)) return std::nullopt;
  ++counts_.failures;
  return false;
}

void BasicAuth::note_refused() {
  std::lock_guard lock(mu_);
  ++counts_.refused;
}

BasicAuth::Counts BasicAuth::counts() const {
  std::lock_guard lock(mu_);
  return counts_;
}

bool BasicAuth::check(std::string_view header) {
  const auto creds = parse_basic_auth(header);
  if (!creds) {
    std::lock_guard lock(mu_);
    ++counts_.failures;
    return false;
  }
  const auto user = users_.find(creds->first);
  const std::string& hash =
      user == users_.end() ? std::string(kDummyHash) : user->second;
  auto data = std::make_unique<crypt_data>();
  const char* out = crypt_rn(creds->second.c_str(), hash.c_str(), data.get(),
                             sizeof(crypt_data));
  const bool ok = out && user != users_.end() && same(hash, out);
  std::lock_guard lock(mu_);
  auto& remembered = ok ? good_ : bad_;
  if (remembered.size() >= (ok ? kMaxRemembered : kMaxRememberedBad))
    remembered.clear();
  remembered.insert(std::string(header));
  if (!ok) ++counts_.failures;
  return ok;
}

}  // namespace gd

// libcrypt is linked statically (src/serve/CMakeLists.txt says why). Its salt
// generator fills random bytes with arc4random_buf, which glibc has only
// since 2.36, above the release bundle's floor of glibc 2.34. This
// definition is the one the archive's call binds to, so the binary asks
// glibc for no arc4random_buf: the same contract (fill all n bytes with
// cryptographically strong randomness, never fail), from getrandom(2)
// (glibc 2.25). serve only checks hashes (crypt_rn) and never makes a salt,
// so nothing calls it today; it is complete all the same.
extern "C" void arc4random_buf(void* buf, size_t n) noexcept {
  gd::random_fill(buf, n);
}
