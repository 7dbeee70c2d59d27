// The Host-header check against DNS rebinding (serve/host_check.h).
#include "serve/host_check.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace gd {
namespace {

TEST(HostCheck, LoopbackListenerAnswersLoopbackNamesWithAnyPort) {
  const HostPolicy p = host_policy_for("127.0.0.1", {});
  for (const char* h :
       {"localhost", "localhost:9856", "LocalHost:80", "localhost.",
        "127.0.0.1", "127.0.0.1:9856", "127.4.5.6:1", "[::1]", "[::1]:9856",
        "[::ffff:127.0.0.1]:9856"})
    EXPECT_TRUE(host_allowed(p, std::string_view(h))) << h;
}

TEST(HostCheck, LoopbackListenerRefusesWhatARebindingPageSends) {
  const HostPolicy p = host_policy_for("127.0.0.1", {});
  for (const char* h :
       {"evil.example", "evil.example:9856", "127.0.0.1.evil.example",
        "localhost.evil.example", "10.0.0.5:9856", "[::2]:9856", "",
        "localhost:http", "localhost:9856:1", "[::1]x", "[::1", "a b",
        "localhost:", "evil.example/x"})
    EXPECT_FALSE(host_allowed(p, std::string_view(h))) << '"' << h << '"';
}

TEST(HostCheck, MissingHostHeaderIsAnswered) {
  EXPECT_TRUE(host_allowed(host_policy_for("127.0.0.1", {}), std::nullopt));
}

TEST(HostCheck, V6AndNamedLoopbackListenersAreLoopback) {
  for (const char* listen : {"::1", "localhost", "127.0.0.2"})
    EXPECT_FALSE(host_allowed(host_policy_for(listen, {}),
                              std::string_view("evil.example")))
        << listen;
}

TEST(HostCheck, OtherListenersAnswerAnyHostUnlessRestricted) {
  EXPECT_TRUE(host_allowed(host_policy_for("0.0.0.0", {}),
                           std::string_view("evil.example")));
  EXPECT_TRUE(host_allowed(host_policy_for("::", {}),
                           std::string_view("gpu7.example:9856")));
  const HostPolicy p = host_policy_for("0.0.0.0", {"gpu7.example", "10.1.2.3"});
  EXPECT_TRUE(host_allowed(p, std::string_view("GPU7.example:9856")));
  EXPECT_TRUE(host_allowed(p, std::string_view("10.1.2.3:9856")));
  EXPECT_TRUE(host_allowed(p, std::string_view("localhost:9856")));
  EXPECT_FALSE(host_allowed(p, std::string_view("evil.example")));
  EXPECT_FALSE(host_allowed(p, std::string_view("gpu7.example.evil")));
}

TEST(HostCheck, AllowedHostAddsToLoopbackAndStarAllowsAny) {
  const HostPolicy p = host_policy_for("127.0.0.1", {"[fd00::7]", "node.lan."});
  EXPECT_TRUE(host_allowed(p, std::string_view("[FD00::7]:9856")));
  EXPECT_TRUE(host_allowed(p, std::string_view("node.lan")));
  EXPECT_FALSE(host_allowed(p, std::string_view("evil.example")));
  EXPECT_TRUE(host_allowed(host_policy_for("127.0.0.1", {"*"}),
                           std::string_view("evil.example")));
}

TEST(HostCheck, BadAllowedHostNamesTheValue) {
  for (const char* bad : {"", "a b", "x/y", "host:80", "[::1"}) {
    try {
      host_policy_for("127.0.0.1", {bad});
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("--allowed-host: '" +
                                           std::string(bad) + "'"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(HostCheck, HeaderNameIsLowerCaseWithoutPortOrBrackets) {
  EXPECT_EQ(host_header_name("Node.LAN.:9856"), "node.lan");
  EXPECT_EQ(host_header_name("[::1]:9856"), "::1");
  EXPECT_EQ(host_header_name("x:99999999"), std::nullopt);
}

}  // namespace
}  // namespace gd
