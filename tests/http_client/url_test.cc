// The one URL parser: what a user types after --connect, --serve or
// --alertmanager, and the one line they get back for a mistake.
#include "http_client/url.h"

#include <gtest/gtest.h>

namespace gd::http {
namespace {

// The message of the refusal of `text` ("" when it was accepted).
std::string error_of(const std::string& text) {
  try {
    parse_url(text);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(Url, SchemeHostPortPathAndQuery) {
  Url u = parse_url("http://127.0.0.1:9856");
  EXPECT_FALSE(u.https);
  EXPECT_EQ(u.host, "127.0.0.1");
  EXPECT_EQ(u.port, 9856);
  EXPECT_EQ(u.path, "");
  EXPECT_EQ(u.query, "");
  EXPECT_EQ(u.scheme_host_port, "http://127.0.0.1:9856");
  EXPECT_EQ(u.text, "http://127.0.0.1:9856");

  u = parse_url("https://prom.example:9090/prometheus/?a=1&b=x%20y");
  EXPECT_TRUE(u.https);
  EXPECT_EQ(u.host, "prom.example");
  EXPECT_EQ(u.port, 9090);
  EXPECT_EQ(u.path, "/prometheus");  // no slash at the end
  EXPECT_EQ(u.query, "a=1&b=x%20y");
  EXPECT_EQ(u.scheme_host_port, "https://prom.example:9090");
}

TEST(Url, DefaultPortsAndBracketedIpv6) {
  EXPECT_EQ(parse_url("http://gpu07").port, 80);
  EXPECT_EQ(parse_url("https://gpu07").port, 443);
  Url u = parse_url("https://[::1]:9856/gpu07/");
  EXPECT_EQ(u.host, "::1");
  EXPECT_EQ(u.port, 9856);
  EXPECT_EQ(u.path, "/gpu07");
  EXPECT_EQ(parse_url("http://[fe80::1]").port, 80);
  EXPECT_EQ(parse_url("http://127.0.0.1:65535").port, 65535);
  EXPECT_EQ(parse_url("http://127.0.0.1:1").port, 1);
}

TEST(Url, PortIsANumberIn1To65535) {
  for (const char* bad : {"http://127.0.0.1:181017078", "http://h:0",
                          "http://h:65536", "http://h:", "http://h:80x",
                          "http://h:-1", "http://[::1]:99999", "http://h:+80"})
    EXPECT_NE(error_of(bad).find("is not a number in 1..65535"),
              std::string::npos)
        << bad << ": " << error_of(bad);
}

TEST(Url, EachMistakeIsOneLineNamingTheUrlAndWhy) {
  const std::pair<const char*, const char*> cases[] = {
      {"ftp://x", "'ftp://x': not an http:// or https:// URL"},
      {"127.0.0.1:9856", "'127.0.0.1:9856': not an http:// or https:// URL"},
      {"http://", "'http://': no host"},
      {"http:///path", "'http:///path': no host"},
      {"http://:80", "'http://:80': no host"},
      // The password is never echoed.
      {"http://user:pw@x",
       "'http://***@x': put credentials in a file, not in the URL"},
      {"https://ops:s3cr3t@prom:9090/x",
       "'https://***@prom:9090/x': put credentials in a file, not in the "
       "URL"},
      {"http://x/#top", "'http://x/#top': a fragment is not sent to a server"},
      {"http://::1:80",
       "'http://::1:80': put an IPv6 address in brackets: "
       "http://[::1]:9856"},
      {"http://[::1", "'http://[::1': no ']' after the IPv6 address"},
      {"http://[::1]x", "'http://[::1]x': only :PORT may follow ']'"},
      {"http://x/a b", "'http://x/a b': spaces or control characters"},
  };
  for (const auto& [text, message] : cases) EXPECT_EQ(error_of(text), message);
  // A control character is not echoed to the terminal as it is.
  EXPECT_EQ(error_of("http://x/\n\x1b[2J"),
            "'http://x/??[2J': spaces or control characters");
}

TEST(Url, AnOverlongUrlIsRefusedAndShownCut) {
  std::string text = "http://x/" + std::string(kMaxUrlChars, 'a');
  std::string e = error_of(text);
  EXPECT_NE(e.find("longer than 2048 characters"), std::string::npos) << e;
  EXPECT_LT(e.size(), 300u);
  EXPECT_EQ(e.find('\n'), std::string::npos);
  EXPECT_EQ(error_of("http://x/" + std::string(kMaxUrlChars - 9, 'a')), "");
}

}  // namespace
}  // namespace gd::http
