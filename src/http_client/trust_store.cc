#include "http_client/trust_store.h"

#include <openssl/x509.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

namespace gd::http {
namespace {

bool set_in_environment(const char* name) {
  const char* v = std::getenv(name);
  return v && *v;
}

bool readable_file(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec) &&
         ::access(path.c_str(), R_OK) == 0;
}

bool has_an_entry(const std::string& dir) {
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  return !ec && it != std::filesystem::directory_iterator();
}

}  // namespace

std::string fallback_ca_bundle(const std::string& default_file,
                               const std::string& default_dir,
                               const std::vector<std::string>& candidates) {
  if (set_in_environment("SSL_CERT_FILE") ||
      set_in_environment("SSL_CERT_DIR") || readable_file(default_file) ||
      has_an_entry(default_dir))
    return "";
  for (const auto& c : candidates)
    if (readable_file(c)) return c;
  return "";
}

const std::string& fallback_ca_bundle() {
  static const std::string bundle =
      fallback_ca_bundle(X509_get_default_cert_file(),
                         X509_get_default_cert_dir(), kSystemCaBundles);
  return bundle;
}

}  // namespace gd::http
