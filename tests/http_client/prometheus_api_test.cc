// The Prometheus API client against fake servers: a good reply decoded, the
// server's error JSON as one line, hostile and huge replies refused within
// the limits, a long range asked for in chunks, 5xx replies tried again.
#include "http_client/prometheus_api.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "http_client/fake_server.h"
#include "http_client/prometheus_decode.h"

namespace gd::http::prom {
namespace {

using testing::FakeServer;

std::string reply(int status, const std::string& body) {
  return "HTTP/1.1 " + std::to_string(status) +
         " X\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

const std::string kMatrix = R"({"status":"success","data":{
  "resultType":"matrix","result":[
  {"metric":{"__name__":"DCGM_FI_DEV_GPU_TEMP","gpu":"0","Hostname":"n1"},
   "values":[[1700000000,"71"],[1700000015,"NaN"],[1700000030.5,"+Inf"]]},
  {"metric":{"gpu":"1"},"values":[[1700000000,"1.5e2"]]}]}})";

Limits fast() {
  Limits l;
  l.backoff_s = 0.01;
  l.request_s = 2;
  l.total_s = 5;
  return l;
}

Result range(const FakeServer& server, const Limits& limits, double start,
             double end, double step) {
  RequestCancel cancel;
  Client client(parse_url(server.url()), {}, limits);
  return client.query_range("up", start, end, step, cancel);
}

TEST(PrometheusApi, DecodesAMatrixWithLabelsAndSpecialValues) {
  FakeServer server({reply(200, kMatrix)});
  Result r = range(server, fast(), 1700000000, 1700000030, 15);
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.series.size(), 2u);
  const Series& s = r.series[0];
  EXPECT_EQ(s.label("__name__"), "DCGM_FI_DEV_GPU_TEMP");
  EXPECT_EQ(s.label("Hostname"), "n1");
  EXPECT_EQ(s.label("absent"), "");
  ASSERT_EQ(s.points.size(), 3u);
  EXPECT_EQ(s.points[0].t, 1700000000);
  EXPECT_EQ(s.points[0].v, 71);
  EXPECT_TRUE(std::isnan(s.points[1].v));
  EXPECT_EQ(s.points[2].t, 1700000030.5);
  EXPECT_TRUE(std::isinf(s.points[2].v));
  EXPECT_EQ(r.series[1].points[0].v, 150);
  const std::string sent = server.request();
  EXPECT_EQ(sent.rfind("GET /api/v1/query_range?query=up&start=1700000000.000"
                       "&end=1700000030.000&step=15.000 HTTP/1.1",
                       0),
            0u)
      << sent;
}

TEST(PrometheusApi, TheServersErrorIsOneLineAndNotTriedAgain) {
  FakeServer server(
      {reply(400, R"({"status":"error","errorType":"bad_data",)"
                  R"("error":"parse error at char 3:\nunexpected"})")});
  Result r = range(server, fast(), 0, 60, 15);
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.error.find("HTTP 400: bad_data: parse error at char 3"),
            std::string::npos)
      << r.error;
  EXPECT_EQ(r.error.find('\n'), std::string::npos) << r.error;
  EXPECT_EQ(server.connections(), 1);
}

TEST(PrometheusApi, A5xxReplyIsTriedAgainWithAPause) {
  FakeServer server({reply(503, R"({"status":"error","errorType":"timeout",)"
                                R"("error":"query timed out"})"),
                     reply(502, "<html>bad gateway</html>"),
                     reply(200, kMatrix)});
  Limits l = fast();
  l.backoff_s = 0.1;
  const auto t0 = std::chrono::steady_clock::now();
  Result r = range(server, l, 1700000000, 1700000030, 15);
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(server.connections(), 3);
  EXPECT_GE(took, 0.3);  // 0.1 s, then 0.2 s
  EXPECT_EQ(r.series.size(), 2u);
}

TEST(PrometheusApi, TriesAreFewAndTheLastErrorIsSaid) {
  FakeServer server(
      {reply(503, R"({"status":"error","errorType":"unavailable",)"
                  R"("error":"tsdb not ready"})")});
  Result r = range(server, fast(), 0, 60, 15);
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(server.connections(), 3);
  EXPECT_NE(r.error.find("HTTP 503: unavailable: tsdb not ready (3 tries)"),
            std::string::npos)
      << r.error;
}

TEST(PrometheusApi, ASilentServerEndsByTheDeadline) {
  FakeServer server(FakeServer::Mode::kSilent);
  Limits l = fast();
  l.request_s = 0.3;
  l.total_s = 1;
  const auto t0 = std::chrono::steady_clock::now();
  Result r = range(server, l, 0, 60, 15);
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  ASSERT_FALSE(r.ok);
  EXPECT_LT(took, 2.0);
  EXPECT_GE(server.connections(), 2);
}

TEST(PrometheusApi, ALongRangeIsAskedInChunksAndJoined) {
  // Each chunk's reply: the same series, with one point at the chunk's start.
  std::vector<std::string> replies;
  for (int i = 0; i < 3; ++i)
    replies.push_back(reply(
        200, R"({"status":"success","data":{"resultType":"matrix","result":[)"
             R"({"metric":{"gpu":"0"},"values":[[)" +
                 std::to_string(i * 100) + R"(,"1"]]}]}})"));
  FakeServer server(replies);
  Limits l = fast();
  l.points_per_query = 10;
  // 0..250 at 10 s: 26 points -> 10 + 10 + 6.
  Result r = range(server, l, 0, 250, 10);
  ASSERT_TRUE(r.ok) << r.error;
  const auto sent = server.requests();
  ASSERT_EQ(sent.size(), 3u);
  EXPECT_NE(sent[0].find("start=0.000&end=90.000&"), std::string::npos);
  EXPECT_NE(sent[1].find("start=100.000&end=190.000&"), std::string::npos);
  EXPECT_NE(sent[2].find("start=200.000&end=250.000&"), std::string::npos);
  ASSERT_EQ(r.series.size(), 1u);
  ASSERT_EQ(r.series[0].points.size(), 3u);
  EXPECT_EQ(r.series[0].points[2].t, 200);
}

TEST(PrometheusApi, SplitRangeCoversTheGridOnce) {
  auto r = split_range(0, 110000, 10, kMaxPointsPerQuery);
  ASSERT_EQ(r.size(), 2u);  // 11,001 points
  EXPECT_EQ(r[0].end, 109990);
  EXPECT_EQ(r[1].start, 110000);
  EXPECT_EQ(r[1].end, 110000);
  EXPECT_EQ(split_range(0, 5, 10, 100).size(), 1u);
  EXPECT_TRUE(split_range(10, 0, 10, 100).empty());
  EXPECT_TRUE(split_range(0, 10, 0, 100).empty());
}

TEST(PrometheusApi, HostileRepliesAreRefusedWithinTheLimits) {
  Limits l = fast();
  l.max_series = 2;
  l.max_points = 4;
  l.max_labels = 3;
  l.max_label_bytes = 8;
  const Budget budget{l.max_series, l.max_points};
  auto decode = [&](const std::string& body) {
    std::vector<Series> out;
    return decode_matrix(body, l, budget, out);
  };
  const std::string head =
      R"({"status":"success","data":{"resultType":"matrix","result":)";
  EXPECT_NE(decode(head + R"([{"metric":{},"values":[]},{"metric":{},)"
                          R"("values":[]},{"metric":{},"values":[]}]}})")
                .find("more than 2 series"),
            std::string::npos);
  EXPECT_NE(decode(head + R"([{"metric":{},"values":[[1,"1"],[2,"1"],)"
                          R"([3,"1"],[4,"1"],[5,"1"]]}]}})")
                .find("more than 4 points"),
            std::string::npos);
  EXPECT_NE(decode(head + R"([{"metric":{"a":"1","b":"1","c":"1","d":"1"},)"
                          R"("values":[]}]}})")
                .find("more than 3 labels"),
            std::string::npos);
  EXPECT_NE(decode(head + R"([{"metric":{},"values":[[1,"x"]]}]}})")
                .find("not a number"),
            std::string::npos);
  EXPECT_NE(
      decode(head + R"([{"metric":{},"values":[[1]]}]}})").find("not [time"),
      std::string::npos);
  EXPECT_NE(decode("not json").find("not JSON"), std::string::npos);
  EXPECT_NE(decode(std::string(10000, '[')).find("not JSON"),
            std::string::npos);
  EXPECT_NE(decode(R"({"status":"success","data":{"resultType":"vector",)"
                   R"("result":[]}})")
                .find("not a matrix"),
            std::string::npos);
  // A long label is cut, not refused; points out of order are dropped.
  std::vector<Series> out;
  ASSERT_EQ(
      decode_matrix(head + R"([{"metric":{"gpu":")" + std::string(1000, 'x') +
                        R"("},"values":[[2,"1"],[1,"2"],[3,"3"]]}]}})",
                    l, budget, out),
      "");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_LT(out[0].label("gpu").size(), 64u);
  EXPECT_EQ(out[0].points.size(), 2u);
}

TEST(PrometheusApi, AHugeReplyIsCutAtItsByteLimitAndNotTriedAgain) {
  std::string body =
      R"({"status":"success","data":{"resultType":"matrix","result":[)";
  body += std::string(200000, ' ') + "]}}";
  FakeServer server({reply(200, body)});
  Limits l = fast();
  l.max_body_bytes = 100000;
  l.tries = 3;
  Result r = range(server, l, 0, 60, 15);
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.error.find("larger than"), std::string::npos) << r.error;
  // The same question gets the same oversize answer: not asked again.
  EXPECT_EQ(server.requests().size(), 1u);
}

TEST(PrometheusApi, SeriesListsLabelSets) {
  FakeServer server(
      {reply(200, R"({"status":"success","data":[)"
                  R"({"__name__":"up","instance":"n1:9100"},)"
                  R"({"__name__":"up","instance":"n2:9100"}]})")});
  RequestCancel cancel;
  Client client(parse_url(server.url()), {}, fast());
  Result r = client.series("up", 0, 60, cancel);
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.series.size(), 2u);
  EXPECT_EQ(r.series[1].label("instance"), "n2:9100");
  EXPECT_NE(server.request().find("match%5B%5D=up&start=0.000&end=60.000"),
            std::string::npos)
      << server.request();
}

}  // namespace
}  // namespace gd::http::prom
