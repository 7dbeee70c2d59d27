// Remote read: its frames, raw samples put on a range query's grid, and
// Client::read_grid against a fake server (what it sends; streamed chunks
// and snappy samples read; a server without remote read said to be one; a
// broken reply refused in one line).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <string>
#include <vector>

#include "http_client/fake_server.h"
#include "http_client/instant_grid.h"
#include "http_client/prometheus_api.h"
#include "http_client/remote_read_fake.h"
#include "http_client/remote_read_frames.h"
#include "http_client/remote_read_wire.h"

namespace gd::http::prom {
namespace {

using testing::FakeSeries;
using testing::FakeServer;

TEST(RemoteReadFrames, FramesArriveWholeWhateverThePieces) {
  const std::string body =
      frame("first") + frame(std::string(300, 'x')) + frame("");
  std::vector<std::string> got;
  FrameReader r(1000, [&](std::string_view m) {
    got.emplace_back(m);
    return std::string();
  });
  for (char c : body) ASSERT_EQ(r.feed(std::string(1, c)), "");
  EXPECT_EQ(r.finish(), "");
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0], "first");
  EXPECT_EQ(got[1], std::string(300, 'x'));
  EXPECT_EQ(got[2], "");
}

TEST(RemoteReadFrames, BadFramesAreRefused) {
  auto ok = [](std::string_view) { return std::string(); };
  std::string body = frame("payload");
  body[body.size() - 1] ^= 1;  // the checksum no longer matches
  EXPECT_EQ(FrameReader(100, ok).feed(body),
            "a remote-read frame whose CRC-32C does not match");
  EXPECT_EQ(FrameReader(4, ok).feed(frame("payload")),
            "a remote-read frame of 7 bytes, over the bound of 4");
  FrameReader cut(100, ok);
  EXPECT_EQ(cut.feed(frame("payload").substr(0, 5)), "");
  EXPECT_EQ(cut.finish(), "the remote-read reply ends inside a frame");
  EXPECT_EQ(FrameReader(100, ok).feed(std::string(11, '\xFF')),
            "a remote-read frame whose size is not a varint");
  FrameReader refusing(100, [](std::string_view) { return std::string("no"); });
  EXPECT_EQ(refusing.feed(frame("a")), "no");
  EXPECT_EQ(refusing.feed(frame("b")), "no");
}

std::vector<Point> on_grid(const std::vector<RawSample>& raw, double start,
                           double end, double step) {
  InstantGrid grid(start, end, step);
  InstantGrid::Cursor c(grid);
  for (const auto& s : raw) c.push(s.t_ms, s.v);
  return c.finish();
}

TEST(InstantGrid, EachGridTimeTakesTheLastSampleAtOrBeforeIt) {
  const auto p =
      on_grid({{1000, 1}, {14000, 2}, {30000, 3}, {31000, 4}}, 0, 60, 15);
  // 0: nothing yet; 15: 14 s's; 30: the sample at 30 s itself; 45, 60: 31 s's.
  ASSERT_EQ(p.size(), 4u);
  EXPECT_EQ(p[0].t, 15);
  EXPECT_EQ(p[0].v, 2);
  EXPECT_EQ(p[1].t, 30);
  EXPECT_EQ(p[1].v, 3);
  EXPECT_EQ(p[2].v, 4);
  EXPECT_EQ(p[3].t, 60);
}

TEST(InstantGrid, NothingOlderThanTheLookbackNorAfterAStaleMarker) {
  // One sample at 0: it stands for 5 minutes (300 s included), no longer.
  auto p = on_grid({{0, 7}}, 0, 600, 15);
  EXPECT_EQ(p.size(), 21u);
  EXPECT_EQ(p.back().t, 300);
  const double stale = std::bit_cast<double>(0x7ff0000000000002ull);
  p = on_grid({{0, 7}, {40000, stale}, {70000, 8}}, 0, 90, 15);
  ASSERT_EQ(p.size(), 5u);  // 0, 15, 30, then 45 and 60 stale, 75, 90
  EXPECT_EQ(p[2].t, 30);
  EXPECT_EQ(p[3].t, 75);
  EXPECT_EQ(p[3].v, 8);
  // A sample not after the last is dropped.
  p = on_grid({{0, 1}, {20000, 2}, {10000, 9}}, 0, 30, 15);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[1].v, 1);
  EXPECT_EQ(p[2].v, 2);
}

Client client_of(const FakeServer& server) {
  Limits l;
  l.tries = 2;
  l.backoff_s = 0.01;
  l.total_s = 5;
  return Client(parse_url(server.url()), {}, l);
}

std::vector<Selector> one_selector() {
  return {{{Matcher::Op::kRe, "__name__", "DCGM_FI_DEV_GPU_TEMP"},
           {Matcher::Op::kEq, "Hostname", "n1"}}};
}

FakeSeries temp_series(const std::string& gpu) {
  FakeSeries s;
  s.labels = {
      {"__name__", "DCGM_FI_DEV_GPU_TEMP"}, {"gpu", gpu}, {"Hostname", "n1"}};
  // Scraped every 10 s from -20 s to 100 s, in two chunks.
  std::vector<RawSample> a, b;
  for (int t = -20; t <= 40; t += 10) a.push_back({t * 1000LL, 50.0 + t});
  for (int t = 50; t <= 100; t += 10) b.push_back({t * 1000LL, 50.0 + t});
  s.chunks = {a, b};
  return s;
}

TEST(RemoteRead, StreamedChunksComeOnTheGrid) {
  // Two frames: GPU 0 whole, then GPU 1 split over two frames (Prometheus
  // splits a series' chunks where a frame fills).
  FakeSeries g1 = temp_series("1");
  FakeSeries g1_second = g1;
  g1.chunks.pop_back();
  g1_second.chunks.erase(g1_second.chunks.begin());
  FakeServer server(
      {testing::streamed_reply({testing::chunked({temp_series("0"), g1}),
                                testing::chunked({g1_second})})});
  RequestCancel cancel;
  Result r = client_of(server).read_grid(one_selector(), 0, 90, 30, cancel);
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.series.size(), 2u);
  for (const Series& s : r.series) {
    ASSERT_EQ(s.points.size(), 4u) << s.label("gpu");
    EXPECT_EQ(s.points[0].v, 50);  // the sample at 0
    EXPECT_EQ(s.points[3].t, 90);
    EXPECT_EQ(s.points[3].v, 140);
    EXPECT_EQ(s.label("Hostname"), "n1");
  }
  const std::string sent = server.requests().at(0);
  EXPECT_EQ(sent.rfind("POST /api/v1/read HTTP/1.1\r\n", 0), 0u) << sent;
  EXPECT_NE(sent.find("Content-Encoding: snappy\r\n"), std::string::npos);
  EXPECT_NE(sent.find("X-Prometheus-Remote-Read-Version: 0.1.0\r\n"),
            std::string::npos);
  EXPECT_NE(sent.find("Content-Type: application/x-protobuf\r\n"),
            std::string::npos);
}

TEST(RemoteRead, TheOlderSamplesReplyIsReadToo) {
  FakeServer server({testing::samples_reply({temp_series("0")})});
  RequestCancel cancel;
  Result r = client_of(server).read_grid(one_selector(), 0, 90, 30, cancel);
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.series.size(), 1u);
  EXPECT_EQ(r.series[0].points.size(), 4u);
}

TEST(RemoteRead, AServerWithoutItSaysSo) {
  for (const std::string& reply :
       {testing::http_reply(404, "text/plain", "404 page not found"),
        testing::http_reply(200, "application/json", "{}")}) {
    FakeServer server({reply});
    RequestCancel cancel;
    Result r = client_of(server).read_grid(one_selector(), 0, 90, 30, cancel);
    EXPECT_FALSE(r.ok);
    EXPECT_TRUE(r.unsupported) << r.error;
    EXPECT_EQ(r.error.rfind(server.url() + "/api/v1/read: ", 0), 0u) << r.error;
  }
}

TEST(RemoteRead, BrokenRepliesAreRefusedNotRetriedAsUnsupported) {
  std::string bad =
      testing::streamed_reply({testing::chunked({temp_series("0")})});
  bad[bad.size() - 3] ^= 0x40;  // inside the message: the CRC fails
  FakeServer server({bad});
  RequestCancel cancel;
  Result r = client_of(server).read_grid(one_selector(), 0, 90, 30, cancel);
  EXPECT_FALSE(r.ok);
  EXPECT_FALSE(r.unsupported);
  EXPECT_EQ(r.error, server.url() +
                         "/api/v1/read: a remote-read frame whose CRC-32C "
                         "does not match");
  // A 5xx is tried again, and the second answer counts.
  FakeServer flaky(
      {testing::http_reply(503, "text/plain", "busy"),
       testing::streamed_reply({testing::chunked({temp_series("0")})})});
  r = client_of(flaky).read_grid(one_selector(), 0, 90, 30, cancel);
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(flaky.requests().size(), 2u);
}

// Messages walked field by field: the repeated one handed out, the others
// skipped, a broken one refused.
TEST(RemoteReadWire, EachMessageOfAFieldInOrder) {
  remote::ChunkedReadResponse r =
      testing::chunked({temp_series("0"), temp_series("1")}, /*query_index=*/7);
  std::vector<std::string> got;
  EXPECT_EQ(each_message(r.SerializeAsString(), 1,
                         [&](std::string_view m) {
                           got.emplace_back(m);
                           return std::string();
                         }),
            "");
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], r.chunked_series(0).SerializeAsString());
  EXPECT_EQ(got[1], r.chunked_series(1).SerializeAsString());
  auto none = [](std::string_view) { return std::string("called"); };
  EXPECT_EQ(each_message(std::string("\x0a\x05"
                                     "ab"),
                         1, none),
            "a remote-read message that is not protobuf");
  EXPECT_EQ(each_message(std::string("\x0b"), 1, none),  // a group
            "a remote-read message that is not protobuf");
  EXPECT_EQ(each_message(std::string(11, '\xff'), 1, none),
            "a remote-read message that is not protobuf");
  EXPECT_EQ(each_message(std::string("\x0a\x00", 2), 1, none), "called");
}

// Empty series count against the series bound, in both kinds of reply,
// before any of them is built.
TEST(RemoteRead, EmptySeriesCountAgainstTheBounds) {
  Limits l;
  l.tries = 1;
  l.max_series = 2;  // 32 series messages at most
  std::string empties;
  for (int i = 0; i < 33; ++i) empties += std::string("\x0a\x00", 2);
  const std::string samples =
      std::string("\x0a") + static_cast<char>(empties.size()) + empties;
  std::string compressed;
  snappy::Compress(samples.data(), samples.size(), &compressed);
  for (const std::string& reply :
       {testing::http_reply(200, "application/x-protobuf", compressed),
        testing::http_reply(200,
                            "application/x-streamed-protobuf; "
                            "proto=prometheus.ChunkedReadResponse",
                            frame(empties))}) {
    FakeServer server({reply});
    RequestCancel cancel;
    Result r = Client(parse_url(server.url()), {}, l)
                   .read_grid(one_selector(), 0, 90, 30, cancel);
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find("more than 32 series messages (empty ones too)"),
              std::string::npos)
        << r.error;
  }
}

TEST(RemoteRead, TheLimitsHold) {
  FakeServer server({testing::streamed_reply(
      {testing::chunked({temp_series("0"), temp_series("1")})})});
  Limits l;
  l.tries = 1;
  l.max_series = 1;
  RequestCancel cancel;
  Result r = Client(parse_url(server.url()), {}, l)
                 .read_grid(one_selector(), 0, 90, 30, cancel);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("more than 1 series"), std::string::npos) << r.error;
  l.max_series = 10;
  l.max_points = 3;
  r = Client(parse_url(server.url()), {}, l)
          .read_grid(one_selector(), 0, 90, 30, cancel);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("points"), std::string::npos) << r.error;
}

}  // namespace
}  // namespace gd::http::prom
