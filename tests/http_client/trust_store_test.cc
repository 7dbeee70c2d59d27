// The CA bundle for https:// when --ca-file names none: OpenSSL's own
// places where they exist (Debian, Ubuntu), else the system's bundle (RHEL,
// SUSE, Alpine).
#include "http_client/trust_store.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace gd::http {
namespace {

namespace fs = std::filesystem;

class TrustStore : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        fs::temp_directory_path() / ("gd_trust_" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "empty_certs");
    fs::create_directories(dir_ / "certs");
    std::ofstream(dir_ / "certs" / "5ed36f99.0") << "PEM\n";
    std::ofstream(dir_ / "rhel.crt") << "PEM\n";
    std::ofstream(dir_ / "debian.pem") << "PEM\n";
    for (const char* v : {"SSL_CERT_FILE", "SSL_CERT_DIR"}) {
      if (const char* old = std::getenv(v)) saved_.emplace_back(v, old);
      ::unsetenv(v);
    }
  }
  void TearDown() override {
    for (const auto& [k, v] : saved_) ::setenv(k.c_str(), v.c_str(), 1);
    fs::remove_all(dir_);
  }
  std::string p(const char* name) const { return (dir_ / name).string(); }
  fs::path dir_;
  std::vector<std::pair<std::string, std::string>> saved_;
};

TEST_F(TrustStore, OpenSslsOwnPlacesWinWhereTheyExist) {
  const std::vector<std::string> systems = {p("rhel.crt")};
  EXPECT_EQ(fallback_ca_bundle(p("debian.pem"), p("none"), systems), "");
  EXPECT_EQ(fallback_ca_bundle(p("none.pem"), p("certs"), systems), "");
}

TEST_F(TrustStore, ElsewhereTheSystemsBundle) {
  // RHEL: no /usr/lib/ssl at all.
  EXPECT_EQ(fallback_ca_bundle(p("none.pem"), p("none"),
                               {p("missing.crt"), p("rhel.crt")}),
            p("rhel.crt"));
  // An empty certs folder counts as none.
  EXPECT_EQ(
      fallback_ca_bundle(p("none.pem"), p("empty_certs"), {p("rhel.crt")}),
      p("rhel.crt"));
  // A folder is no bundle; nothing found: OpenSSL's defaults, and the
  // error names --ca-file.
  EXPECT_EQ(fallback_ca_bundle(p("none.pem"), p("none"),
                               {p("certs"), p("missing.crt")}),
            "");
}

TEST_F(TrustStore, TheEnvironmentIsOpenSslsToHonour) {
  ::setenv("SSL_CERT_FILE", p("debian.pem").c_str(), 1);
  EXPECT_EQ(fallback_ca_bundle(p("none.pem"), p("none"), {p("rhel.crt")}), "");
  ::unsetenv("SSL_CERT_FILE");
  ::setenv("SSL_CERT_DIR", p("certs").c_str(), 1);
  EXPECT_EQ(fallback_ca_bundle(p("none.pem"), p("none"), {p("rhel.crt")}), "");
}

TEST(SystemCaBundles, DebianFirstThenRhel) {
  ASSERT_GE(kSystemCaBundles.size(), 2u);
  EXPECT_EQ(kSystemCaBundles[0], "/etc/ssl/certs/ca-certificates.crt");
  EXPECT_EQ(kSystemCaBundles[1], "/etc/pki/tls/certs/ca-bundle.crt");
}

}  // namespace
}  // namespace gd::http
