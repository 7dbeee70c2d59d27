// A node read through a fake Prometheus: every table entry asked for, with
// the node's selector, and the answers as samples; a server error is one
// line naming the field.
#include "promsource/read_node.h"

#include <gtest/gtest.h>

#include <string>

#include "http_client/fake_server.h"
#include "http_client/remote_read_fake.h"
#include "promsource/fleet_nodes.h"
#include "promsource/query_batches.h"

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

size_t entry_of(const std::string& field) {
  const auto all = entries();
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i].field == field) return i;
  ADD_FAILURE() << "no entry " << field;
  return 0;
}

std::string tagged_series(size_t entry, const std::string& values) {
  return R"({"metric":{"gpu":"0","Hostname":"n1","gd_entry":")" +
         std::to_string(entry) + R"("},"values":)" + values + "}";
}

TEST(ReadNode, AsksForTheEntriesInBatchesWithTheNodesSelector) {
  // Every query gets the same answer: GPU 0 of n1 at 0 and 15, as the
  // temperature's and the load's entries (each a batch's tag).
  FakeServer server({reply(
      200, R"({"status":"success","data":{"resultType":"matrix","result":[)" +
               tagged_series(entry_of("temp_c"), R"([[0,"7"],[15,"8"]])") +
               "," + tagged_series(entry_of("load1"), R"([[0,"3"],[15,"4"]])") +
               "]}}")});
  http::RequestCancel cancel;
  ReadChoice range(ReadPath::kQueryRange);
  NodeWindow w =
      read_node(client(server), {"n1", 0, 15, 15, {}, ""}, range, cancel);
  const auto sent = server.requests();
  // 78 entries: GPU ones 16 a batch, the host ones in one or two, the
  // per-process ones alone.
  EXPECT_LE(sent.size(), 16u);
  EXPECT_LT(sent.size(), entries().size() / 4);
  // label_replace(DCGM_FI_DEV_GPU_UTIL{Hostname="n1"} or ..., "gd_entry",
  // "0", "", "") or ..., percent-encoded.
  EXPECT_NE(sent[0].find("query=label_replace(DCGM_FI_DEV_GPU_UTIL%7B"
                         "Hostname%3D%22n1%22%7D%20or%20"),
            std::string::npos)
      << sent[0];
  EXPECT_NE(sent[0].find("%22gd_entry%22%2C%20%220%22%2C%20%22%22%2C%20%22%22"
                         ")%20or%20label_replace("),
            std::string::npos)
      << sent[0];
  size_t n = 0;
  w.each_sample([&](const Sample& s) {
    ++n;
    ASSERT_EQ(s.gpus.size(), 1u);
    EXPECT_EQ(s.gpus[0].temp_c, s.t == 0 ? 7 : 8);
    EXPECT_FALSE(s.gpus[0].util_pct);  // no series tagged as its entry
    EXPECT_EQ(s.host.load1, s.t == 0 ? 3 : 4);
  });
  EXPECT_EQ(n, 2u);
}

TEST(ReadNode, EveryQueryBoundedInEntriesTextAndPoints) {
  const NodeSelector node{"n1", {}, ""};
  size_t asked = 0;
  for (const auto& b : query_batches(node, 15, 5761, 8'000'000, true)) {
    asked += b.entries.size();
    EXPECT_LE(b.entries.size(), kMaxBatchEntries);
    EXPECT_LE(b.query.size(), kMaxBatchQueryBytes);
  }
  EXPECT_EQ(asked, entries().size());
  // Two days at 15 s: a GPU entry may give 64 series of 11,520 points, so
  // 10 of them fill the client's 8,000,000 points.
  for (const auto& b : query_batches(node, 15, 11520, 8'000'000, true)) {
    if (entries()[b.entries[0]].scope == Scope::kGpu) {
      EXPECT_LE(b.entries.size(), 10u);
    }
  }
  // Without the GPU entries (remote read gave them), only the host's.
  for (const auto& b : query_batches(node, 15, 240, 8'000'000, false)) {
    for (size_t i : b.entries) {
      EXPECT_EQ(entries()[i].scope, Scope::kHost);
    }
  }
}

TEST(ReadNode, ARefusedBatchIsAskedEntryByEntry) {
  // The first query (a batch) is refused as VictoriaMetrics refuses one
  // past -search.maxQueryLen; the node is then asked entry by entry.
  FakeServer server(
      {reply(422, R"({"status":"error","errorType":"bad_data",)"
                  R"("error":"too long query"})"),
       reply(
           200,
           R"({"status":"success","data":{"resultType":"matrix","result":[)"
           R"({"metric":{"gpu":"0","Hostname":"n1"},"values":[[0,"7"]]}]}})")});
  http::RequestCancel cancel;
  ReadChoice range(ReadPath::kQueryRange);
  NodeWindow w =
      read_node(client(server), {"n1", 0, 15, 15, {}, ""}, range, cancel);
  const auto sent = server.requests();
  EXPECT_NE(sent[1].find("query=DCGM_FI_DEV_GPU_UTIL%7BHostname%3D%22n1%22"),
            std::string::npos)
      << sent[1];
  size_t n = 0;
  w.each_sample([&](const Sample& s) {
    ++n;
    ASSERT_EQ(s.gpus.size(), 1u);
    EXPECT_EQ(s.gpus[0].util_pct, 7);
  });
  EXPECT_EQ(n, 1u);
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
  // rule), then the host entries' range queries.
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
  // The host entries in one or two batches.
  EXPECT_LE(sent.size(), 1u + 2u);
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
       reply(200,
             R"({"status":"success","data":{"resultType":"matrix","result":[)" +
                 tagged_series(entry_of("util_pct"), R"([[0,"7"]])") + "]}}")});
  http::RequestCancel cancel;
  ReadChoice read(ReadPath::kAuto);
  NodeWindow w =
      read_node(client(server), {"n1", 0, 15, 15, {}, ""}, read, cancel);
  EXPECT_NE(read.fallback().find("/api/v1/read: HTTP 404"), std::string::npos)
      << read.fallback();
  EXPECT_FALSE(read.remote());  // the next node goes straight to query_range
  EXPECT_EQ(server.requests().size(),
            1 + query_batches({"n1", {}, ""}, 15, 2, 8'000'000, true).size());
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
