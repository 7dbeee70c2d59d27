// --web-config: the exporter-toolkit format, strict about what it does not
// know (serve/web_config.h), and basic auth against bcrypt hashes
// (serve/basic_auth.h).
#include "serve/web_config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "serve/basic_auth.h"

namespace gd {
namespace {

// bcrypt of "s3cret pass" (cost 4: fast tests).
constexpr const char* kPrometheusHash =
    "$2b$04$abcdefghijklmnopqrstuuoBpIrM0OnplXjsOI8DWYJTHUhJDuUv.";

class WebConfigFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gd-webcfg-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir = tmpl;
    std::ofstream(dir + "/server.crt") << "CERT PEM";
    std::ofstream(dir + "/server.key") << "KEY PEM";
  }
  void TearDown() override {
    std::string cmd = "rm -rf '" + dir + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
  }
  std::string error_of(const std::string& text) {
    try {
      parse_web_config(text, dir);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "(accepted)";
  }
  std::string dir;
};

TEST_F(WebConfigFiles, ReadsTlsAndUsersLikeNodeExporter) {
  const WebConfig c = parse_web_config(
      "tls_server_config:\n"
      "  cert_file: server.crt\n"
      "  key_file: " +
          dir +
          "/server.key\n"
          "  min_version: TLS13\n"
          "basic_auth_users:\n"
          "  prometheus: " +
          std::string(kPrometheusHash) + "\n",
      dir);
  EXPECT_TRUE(c.tls);
  EXPECT_EQ(c.cert_pem, "CERT PEM");
  EXPECT_EQ(c.key_pem, "KEY PEM");
  EXPECT_EQ(c.tls_priorities, "NORMAL:-VERS-ALL:+VERS-TLS1.3");
  EXPECT_EQ(c.basic_auth_users.at("prometheus"), kPrometheusHash);
  EXPECT_EQ(parse_web_config(
                "basic_auth_users:\n  a: " + std::string(kPrometheusHash), dir)
                .tls_priorities,
            "");
}

TEST_F(WebConfigFiles, DefaultTlsVersionsAre12And13) {
  EXPECT_EQ(parse_web_config("tls_server_config: {cert_file: server.crt, "
                             "key_file: server.key}",
                             dir)
                .tls_priorities,
            "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2");
}

TEST_F(WebConfigFiles, UnknownAndUnsupportedKeysAreErrorsNamingThem) {
  EXPECT_EQ(error_of("tls_server_config: {cert_file: server.crt, key_file: "
                     "server.key, cert_fiel: x}"),
            "unknown key tls_server_config.cert_fiel");
  EXPECT_EQ(error_of("basic_auth: {}"), "unknown key web config.basic_auth");
  EXPECT_EQ(error_of("tls_server_config: {cert_file: server.crt, key_file: "
                     "server.key, client_ca_file: ca.crt}"),
            "tls_server_config.client_ca_file is not supported by gpudoctor");
  EXPECT_NE(
      error_of("tls_server_config: {cert_file: server.crt, key_file: "
               "server.key, client_auth_type: RequireAndVerifyClientCert}")
          .find("only NoClientCert"),
      std::string::npos);
  EXPECT_EQ(error_of("tls_server_config: {cert_file: server.crt, key_file: "
                     "server.key, min_version: TLS14}"),
            "tls_server_config.min_version: 'TLS14' is not TLS10, TLS11, TLS12 "
            "or TLS13");
  EXPECT_EQ(error_of("basic_auth_users: {alice: plain}"),
            "basic_auth_users.alice: not a bcrypt hash ($2a$, $2b$, $2y$)");
  EXPECT_NE(error_of("tls_server_config: [\n").find("not YAML: line"),
            std::string::npos);
}

TEST_F(WebConfigFiles, UnreadableFilesNameThePath) {
  EXPECT_EQ(
      error_of(
          "tls_server_config: {cert_file: nope.crt, key_file: server.key}"),
      "tls_server_config.cert_file: cannot read " + dir + "/nope.crt");
  try {
    load_web_config(dir + "/missing.yml");
    FAIL() << "loaded a missing file";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "web config " + dir +
                                         "/missing.yml: file: cannot read " +
                                         dir + "/missing.yml");
  }
}

TEST(BasicAuth, ParsesTheHeader) {
  auto p = parse_basic_auth("Basic cHJvbWV0aGV1czpzM2NyZXQgcGFzcw==");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->first, "prometheus");
  EXPECT_EQ(p->second, "s3cret pass");
  EXPECT_FALSE(parse_basic_auth("Bearer abc"));
  EXPECT_FALSE(parse_basic_auth("Basic !!!"));
  EXPECT_FALSE(parse_basic_auth("Basic bm9jb2xvbg=="));  // "nocolon"
}

TEST(BasicAuth, RightPasswordPassesWrongOnesDoNot) {
  BasicAuth auth(
      std::map<std::string, std::string>{{"prometheus", kPrometheusHash}});
  const std::string good = "Basic cHJvbWV0aGV1czpzM2NyZXQgcGFzcw==";
  EXPECT_FALSE(auth.known(good));
  EXPECT_TRUE(auth.check(good));
  EXPECT_EQ(auth.known(good), std::optional<bool>(true));
  EXPECT_FALSE(
      auth.check("Basic cHJvbWV0aGV1czp3cm9uZw=="));  // prometheus:wrong
  EXPECT_FALSE(
      auth.check("Basic bWFsbG9yeTpzM2NyZXQgcGFzcw=="));  // mallory:s3cret pass
  EXPECT_EQ(auth.counts().failures, 2u);
}

// crypt_rn reads the password up to its first NUL: "s3cret pass\0junk"
// would pass for "s3cret pass" if it got that far.
TEST(BasicAuth, CredentialsWithANulByteAreRefused) {
  const auto header = [](std::string_view user_pass) {
    static constexpr char kB64[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out = "Basic ";
    for (size_t i = 0; i < user_pass.size(); i += 3) {
      unsigned n = static_cast<unsigned char>(user_pass[i]) << 16;
      if (i + 1 < user_pass.size())
        n |= static_cast<unsigned char>(user_pass[i + 1]) << 8;
      if (i + 2 < user_pass.size())
        n |= static_cast<unsigned char>(user_pass[i + 2]);
      out += kB64[(n >> 18) & 63];
      out += kB64[(n >> 12) & 63];
      out += i + 1 < user_pass.size() ? kB64[(n >> 6) & 63] : '=';
      out += i + 2 < user_pass.size() ? kB64[n & 63] : '=';
    }
    return out;
  };
  using namespace std::string_view_literals;
  ASSERT_EQ(header("prometheus:s3cret pass"),
            "Basic cHJvbWV0aGV1czpzM2NyZXQgcGFzcw==");
  EXPECT_FALSE(parse_basic_auth(header("prometheus:s3cret pass\0junk"sv)));
  EXPECT_FALSE(parse_basic_auth(header("prometheus\0x:s3cret pass"sv)));
  BasicAuth auth(
      std::map<std::string, std::string>{{"prometheus", kPrometheusHash}});
  // Refused on the event loop already, without a check.
  EXPECT_EQ(auth.known(header("prometheus:s3cret pass\0junk"sv)),
            std::optional<bool>(false));
  EXPECT_FALSE(auth.check(header("prometheus:s3cret pass\0junk"sv)));
  EXPECT_FALSE(auth.check(header("prometheus:s3cret pass\0"sv)));
  EXPECT_TRUE(auth.check(header("prometheus:s3cret pass")));
}

// A wrong password tried again is answered from memory (no second bcrypt)
// and counted each time.
TEST(BasicAuth, AFailedHeaderIsRememberedAsFailed) {
  BasicAuth auth(
      std::map<std::string, std::string>{{"prometheus", kPrometheusHash}});
  const std::string wrong = "Basic cHJvbWV0aGV1czp3cm9uZw==";
  EXPECT_FALSE(auth.known(wrong));
  EXPECT_FALSE(auth.check(wrong));
  EXPECT_EQ(auth.known(wrong), std::optional<bool>(false));
  EXPECT_EQ(auth.known(wrong), std::optional<bool>(false));
  EXPECT_EQ(auth.counts().failures, 3u);
  auth.note_refused();
  EXPECT_EQ(auth.counts().refused, 1u);
  // The right password is not held up by the wrong one remembered.
  EXPECT_TRUE(auth.check("Basic cHJvbWV0aGV1czpzM2NyZXQgcGFzcw=="));
}

}  // namespace
}  // namespace gd
