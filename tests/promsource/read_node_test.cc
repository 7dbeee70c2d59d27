// A node read through a fake Prometheus: every table entry asked for, with
// the node's selector, and the answers as samples; a server error is one
// line naming the field.
#include "promsource/read_node.h"

#include <gtest/gtest.h>

#include <string>

#include "http_client/fake_server.h"
#include "promsource/fleet_nodes.h"

namespace gd::promsource {
namespace {

using http::testing::FakeServer;

std::string reply(int status, const std::string& body) {
  return "HTTP/1.1 " + std::to_string(status) +
         " X\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

http::prom::Client client(const FakeServer& server) {
  http::prom::Limits l;
  l.tries = 1;
  l.total_s = 5;
  return http::prom::Client(http::parse_url(server.url()), {}, l);
}

TEST(ReadNode, AsksForEveryEntryWithTheNodesSelector) {
  // Every query gets the same answer: GPU 0 of n1 at 0 and 15.
  FakeServer server({reply(
      200,
      R"({"status":"success","data":{"resultType":"matrix","result":[)"
      R"({"metric":{"gpu":"0","Hostname":"n1"},"values":[[0,"7"],[15,"8"]]}]}})")});
  http::RequestCancel cancel;
  NodeWindow w = read_node(client(server), {"n1", 0, 15, 15}, cancel);
  const auto sent = server.requests();
  EXPECT_EQ(sent.size(), entries().size());
  // DCGM_FI_DEV_GPU_UTIL{Hostname="n1"} or ..., percent-encoded.
  EXPECT_NE(sent[0].find("query=DCGM_FI_DEV_GPU_UTIL%7BHostname%3D%22n1%22%7D"
                         "%20or%20"),
            std::string::npos)
      << sent[0];
  size_t n = 0;
  w.each_sample([&](const Sample& s) {
    ++n;
    ASSERT_EQ(s.gpus.size(), 1u);
    EXPECT_EQ(s.gpus[0].temp_c, s.t == 0 ? 7 : 8);
    EXPECT_EQ(s.host.load1, s.t == 0 ? 7 : 8);
  });
  EXPECT_EQ(n, 2u);
}

TEST(ReadNode, AServerErrorNamesTheField) {
  FakeServer server({reply(422, R"({"status":"error","errorType":"execution",)"
                                R"("error":"too many samples"})")});
  http::RequestCancel cancel;
  try {
    read_node(client(server), {"n1", 0, 15, 15}, cancel);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("asking for util_pct (DCGM_FI_DEV_GPU_UTIL): "),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("HTTP 422: execution: too many samples"),
              std::string::npos)
        << what;
  }
  EXPECT_THROW(read_node(client(server), {"n1\"}", 0, 15, 15}, cancel),
               std::invalid_argument);
}

TEST(FleetNodes, EveryNodeOnceByTheJoinRule) {
  FakeServer server({reply(
      200, R"({"status":"success","data":[)"
           R"({"__name__":"DCGM_FI_DEV_GPU_UTIL","gpu":"0","Hostname":"b"},)"
           R"({"__name__":"DCGM_FI_DEV_GPU_UTIL","gpu":"1","Hostname":"b"},)"
           R"({"__name__":"DCGM_FI_DEV_GPU_UTIL","instance":"a.dc:9856"},)"
           R"({"__name__":"DCGM_FI_DEV_GPU_UTIL","Hostname":"x\"} or"}]})")});
  http::RequestCancel cancel;
  EXPECT_EQ(fleet_nodes(client(server), 0, 60, cancel),
            (std::vector<std::string>{"a.dc", "b"}));
  EXPECT_NE(server.request().find("match%5B%5D=DCGM_FI_DEV_GPU_UTIL&"),
            std::string::npos);
}

}  // namespace
}  // namespace gd::promsource
