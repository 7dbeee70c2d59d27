// A node read through a fake Prometheus: every table entry asked for, with
// the node's selector, and the answers as samples; a server error is one
// line naming the field.
#include "promsource/read_node.h"

#include <gtest/gtest.h>

#include <string>

#include "http_client/fake_server.h"
#include "http_client/remote_read_fake.h"
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
  ReadChoice range(ReadPath::kQueryRange);
  NodeWindow w =
      read_node(client(server), {"n1", 0, 15, 15, {}, ""}, range, cancel);
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
  ReadChoice range(ReadPath::kQueryRange);
  try {
    read_node(client(server), {"n1", 0, 15, 15, {}, ""}, range, cancel);
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
  EXPECT_THROW(
      read_node(client(server), {"n1\"}", 0, 15, 15, {}, ""}, range, cancel),
      std::invalid_argument);
}

const std::string kEmptyMatrix =
    reply(200, R"({"status":"success","data":{"resultType":"matrix",)"
               R"("result":[]}})");

TEST(ReadNode, GpuSeriesByRemoteReadInOneRequest) {
  // The GPU series in one remote read (both selectors of the node's join
  // rule), then a range query per host entry.
  http::testing::FakeSeries temp;
  temp.labels = {
      {"__name__", "DCGM_FI_DEV_GPU_TEMP"}, {"gpu", "0"}, {"Hostname", "n1"}};
  temp.chunks = {{{0, 61}, {15000, 62}}};
  FakeServer server(
      {http::testing::streamed_reply({http::testing::chunked({temp})}),
       kEmptyMatrix});
  http::RequestCancel cancel;
  ReadChoice read(ReadPath::kAuto);
  NodeWindow w =
      read_node(client(server), {"n1", 0, 15, 15, {}, ""}, read, cancel);
  EXPECT_EQ(read.fallback(), "");
  const auto sent = server.requests();
  size_t host_entries = 0;
  for (const Entry& e : entries()) host_entries += e.scope == Scope::kHost;
  EXPECT_EQ(sent.size(), 1 + host_entries);
  EXPECT_EQ(sent[0].rfind("POST /api/v1/read ", 0), 0u);
  std::vector<double> temps;
  w.each_sample([&](const Sample& s) {
    ASSERT_EQ(s.gpus.size(), 1u);
    temps.push_back(s.gpus[0].temp_c.value_or(-1));
  });
  EXPECT_EQ(temps, (std::vector<double>{61, 62}));
}

TEST(ReadNode, AServerWithoutRemoteReadIsAskedByQueryRange) {
  FakeServer server(
      {reply(404, "404 page not found"),
       reply(
           200,
           R"({"status":"success","data":{"resultType":"matrix","result":[)"
           R"({"metric":{"gpu":"0","Hostname":"n1"},"values":[[0,"7"]]}]}})")});
  http::RequestCancel cancel;
  ReadChoice read(ReadPath::kAuto);
  NodeWindow w =
      read_node(client(server), {"n1", 0, 15, 15, {}, ""}, read, cancel);
  EXPECT_NE(read.fallback().find("/api/v1/read: HTTP 404"), std::string::npos)
      << read.fallback();
  EXPECT_FALSE(read.remote());  // the next node goes straight to query_range
  EXPECT_EQ(server.requests().size(), 1 + entries().size());
  size_t n = 0;
  w.each_sample([&](const Sample&) { ++n; });
  EXPECT_EQ(n, 1u);
  // Asked for remote read only, the refusal is the node's error.
  ReadChoice only(ReadPath::kRemoteRead);
  FakeServer refusing({reply(404, "404 page not found")});
  EXPECT_THROW(
      read_node(client(refusing), {"n1", 0, 15, 15, {}, ""}, only, cancel),
      std::runtime_error);
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

// node_exporter scraped at an address names its node in node_uname_info:
// the address joins the node; names and hosts that could not be asked for,
// the node's own name and repeats are left out.
TEST(NodeAliases, AnAddressNamedByNodeUnameInfoIsTheNode) {
  FakeServer server({reply(
      200,
      R"({"status":"success","data":[)"
      R"({"__name__":"node_uname_info","nodename":"gpu07","instance":"10.0.0.7:9100"},)"
      R"({"__name__":"node_uname_info","nodename":"gpu07","instance":"10.0.0.7:9101"},)"
      R"({"__name__":"node_uname_info","nodename":"gpu08","instance":"gpu08:9100"},)"
      R"({"__name__":"node_uname_info","nodename":"x\"} or","instance":"10.0.0.9:9100"},)"
      R"({"__name__":"node_uname_info","nodename":"gpu09","instance":"[::9]:9100"}]})")});
  http::RequestCancel cancel;
  const auto aliases = node_aliases(client(server), 0, 60, cancel);
  ASSERT_EQ(aliases.count("gpu07"), 1u);
  EXPECT_EQ(aliases.at("gpu07"), std::vector<std::string>{"10.0.0.7"});
  EXPECT_TRUE(aliases.at("gpu08").empty());
  EXPECT_EQ(aliases.count("gpu09"), 0u);
  EXPECT_EQ(aliases.size(), 2u);
  EXPECT_NE(server.request().find("match%5B%5D=node_uname_info&"),
            std::string::npos);
}

TEST(NodeSelector, AliasesAndNodeLabelShapeTheHostQueries) {
  const NodeSelector by_ip{"gpu07", {"10.0.0.7"}, ""};
  EXPECT_EQ(instance_matcher(by_ip),
            R"(instance=~"(gpu07|10\\.0\\.0\\.7)(:[0-9]+)?")");
  EXPECT_EQ(host_matcher(by_ip), instance_matcher(by_ip));
  const NodeSelector by_label{"gpu07", {}, "nodename"};
  EXPECT_EQ(host_matcher(by_label), R"(nodename="gpu07")");
  EXPECT_THROW(host_matcher(NodeSelector{"gpu07", {}, "a-b"}),
               std::invalid_argument);
  // A series of an alias joins only when it has no Hostname of its own.
  EXPECT_TRUE(is_node_of(by_ip, "", "10.0.0.7:9856"));
  EXPECT_TRUE(is_node_of(by_ip, "gpu07", "10.0.0.8:9400"));
  EXPECT_FALSE(is_node_of(by_ip, "gpu08", "10.0.0.7:9400"));
  EXPECT_FALSE(is_node_of(by_ip, "", "10.0.0.70:9400"));
}

TEST(QueryOf, ServesHostSeriesJoinByHostnameAsGpuSeriesDo) {
  const NodeSelector node{"n1", {}, "nodename"};
  for (const Entry& e : entries()) {
    const std::string q = query_of(e, node, 15);
    EXPECT_EQ(q.find('$'), std::string::npos) << q;
    if (std::string(e.query) == "max($S(gpudoctor_host_cpu_steal_percent))") {
      EXPECT_EQ(q, R"(max((gpudoctor_host_cpu_steal_percent{Hostname="n1"} or )"
                   R"(gpudoctor_host_cpu_steal_percent{Hostname="",)"
                   R"(instance=~"n1(:[0-9]+)?"})))");
    }
    if (std::string(e.query) == "max(node_load1{$I})") {
      EXPECT_EQ(q, R"(max(node_load1{nodename="n1"}))");
    }
  }
}

}  // namespace
}  // namespace gd::promsource
