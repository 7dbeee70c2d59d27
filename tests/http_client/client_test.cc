// The one HTTP client against servers on threads of the test: what it sends
// (path, query, auth, body), and that whatever a server does, a request
// ends by its deadline, its bounds or a cancel, with one line saying why.
#include "http_client/client.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <chrono>
#include <string>
#include <thread>

#include "http_client/fake_server.h"

namespace gd::http {
namespace {

using testing::FakeServer;
using Clock = std::chrono::steady_clock;

std::string ok_reply(const std::string& body,
                     const std::string& type = "text/plain") {
  return "HTTP/1.1 200 OK\r\nContent-Type: " + type +
         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" +
         body;
}

Reply get(const std::string& url, double total_s, RequestCancel& cancel,
          const Credentials& who = {}) {
  Request req;
  req.path = "/api/v1/status";
  req.total_s = total_s;
  return send(parse_url(url), who, req, cancel);
}

double process_cpu_s() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

TEST(HttpClient, GetSendsPathQueryAndBasicAuth) {
  FakeServer server(FakeServer::Mode::kReply, ok_reply("hello"));
  Request req;
  req.path = "/api/v1/query";
  req.query = {{"query", "up{job=\"gd\"} > 0"}, {"time", "1.5"}};
  RequestCancel cancel;
  Credentials who;
  who.user = "ops";
  who.password = "s3cret";
  Reply r = send(parse_url(server.url() + "/prom/?x=0"), who, req, cancel);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "hello");
  EXPECT_EQ(r.header("content-type"), "text/plain");
  EXPECT_EQ(r.header("X-Absent"), "");
  const std::string sent = server.request();
  EXPECT_EQ(sent.rfind("GET /prom/api/v1/query?x=0&query=up%7Bjob%3D%22gd%22%7D"
                       "%20%3E%200&time=1.5 HTTP/1.1\r\n",
                       0),
            0u)
      << sent;
  // base64("ops:s3cret")
  EXPECT_NE(sent.find("Authorization: Basic b3BzOnMzY3JldA==\r\n"),
            std::string::npos)
      << sent;
}

TEST(HttpClient, BearerTokenIsSent) {
  FakeServer server(FakeServer::Mode::kReply, ok_reply("{}"));
  RequestCancel cancel;
  Credentials who;
  who.bearer_token = "t0ken";
  Reply r = get(server.url(), 5, cancel, who);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_NE(server.request().find("Authorization: Bearer t0ken\r\n"),
            std::string::npos)
      << server.request();
}

TEST(HttpClient, PostSendsItsBodyAndContentType) {
  FakeServer server(FakeServer::Mode::kReply,
                    "HTTP/1.1 503 Service Unavailable\r\nContent-Length: "
                    "4\r\n\r\nbusy");
  Request req;
  req.method = "POST";
  req.path = "/api/v2/alerts";
  req.body = R"([{"labels":{"alertname":"gpu-lost"}}])";
  req.content_type = "application/json";
  RequestCancel cancel;
  Reply r = send(parse_url(server.url()), {}, req, cancel);
  // Another status is still a reply: the caller judges it.
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.body, "busy");
  const std::string sent = server.request();
  EXPECT_EQ(sent.rfind("POST /api/v2/alerts HTTP/1.1\r\n", 0), 0u) << sent;
  EXPECT_NE(sent.find("Content-Type: application/json\r\n"), std::string::npos);
  EXPECT_EQ(sent.substr(sent.find("\r\n\r\n") + 4), req.body);
}

TEST(HttpClient, AServerThatNeverAnswersEndsAtTheDeadline) {
  FakeServer server(FakeServer::Mode::kSilent);
  RequestCancel cancel;
  const auto t0 = Clock::now();
  Reply r = get(server.url(), 0.5, cancel);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error,
            "cannot reach " + server.url() + ": no complete reply within 0.5s");
  EXPECT_GE(seconds_since(t0), 0.45);
  EXPECT_LT(seconds_since(t0), 2.0);
}

TEST(HttpClient, ADrippingReplyEndsAtTheTotalDeadline) {
  // One byte every 200 ms: each read is quick, the reply never completes.
  FakeServer server(FakeServer::Mode::kDrip);
  RequestCancel cancel;
  Reply r = get(server.url(), 1, cancel);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error,
            "cannot reach " + server.url() + ": no complete reply within 1s");
  EXPECT_GE(server.dripped(), 2);
}

TEST(HttpClient, WaitingForASlowServerTakesNoCpu) {
  // A client that spins on a socket with nothing to read (recv answering
  // EAGAIN in a loop) burns a core for as long as the server is slow; it
  // must sleep in poll instead. The process's CPU over a one-second drip is
  // that of a few reads, far under the second a spinning client uses.
  FakeServer server(FakeServer::Mode::kDrip);
  RequestCancel cancel;
  const double cpu0 = process_cpu_s();
  Reply r = get(server.url(), 1, cancel);
  EXPECT_FALSE(r.ok);
  EXPECT_LT(process_cpu_s() - cpu0, 0.3);
}

TEST(HttpClient, EndlessHeadersEndAtTheHeadsBound) {
  FakeServer server(FakeServer::Mode::kHeaders);
  RequestCancel cancel;
  Reply r = get(server.url(), 30, cancel);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error,
            server.url() + ": the reply's headers exceed 100 lines or 64 KiB");
}

TEST(HttpClient, OneHugeHeaderLineEndsAtTheHeadsBound) {
  FakeServer server(FakeServer::Mode::kReply,
                    "HTTP/1.1 200 OK\r\nX-Big: " + std::string(70000, 'a') +
                        "\r\nContent-Length: 0\r\n\r\n");
  RequestCancel cancel;
  Reply r = get(server.url(), 30, cancel);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error,
            server.url() + ": the reply's headers exceed 100 lines or 64 KiB");
}

TEST(HttpClient, ABodyOverItsBoundIsRefused) {
  FakeServer server(FakeServer::Mode::kReply, ok_reply(std::string(5000, 'x')));
  Request req;
  req.path = "/api/v1/status";
  req.max_body_bytes = 4096;
  RequestCancel cancel;
  Reply r = send(parse_url(server.url()), {}, req, cancel);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error,
            server.url() + "/api/v1/status: the reply is larger than 4 KiB");
  EXPECT_LE(r.body.size(), 4096u);
  // Exactly at the bound is fine.
  req.max_body_bytes = 5000;
  EXPECT_TRUE(send(parse_url(server.url()), {}, req, cancel).ok);
}

TEST(HttpClient, BodyPiecesGoToTheCallerWhenAsked) {
  FakeServer server(FakeServer::Mode::kReply,
                    ok_reply("line 1\nline 2\n", "application/x-ndjson"));
  Request req;
  std::string type, pieces;
  req.on_head = [&](const Reply& head) {
    type = head.header("Content-Type");
    return head.status == 200;
  };
  req.on_body = [&](std::string_view piece) {
    pieces.append(piece);
    return true;
  };
  RequestCancel cancel;
  Reply r = send(parse_url(server.url()), {}, req, cancel);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(type, "application/x-ndjson");
  EXPECT_EQ(pieces, "line 1\nline 2\n");
  EXPECT_EQ(r.body, "");  // given away, not kept
}

TEST(HttpClient, ACancelFromAnotherThreadEndsTheRequestAtOnce) {
  // The deadline is far away: only the cancel can end it while the server
  // still drips.
  FakeServer server(FakeServer::Mode::kDrip, "", 150);
  RequestCancel cancel;
  std::thread quitter([&] {
    while (server.dripped() < 3)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    cancel.cancel();
  });
  Reply r = get(server.url(), 600, cancel);
  quitter.join();
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "stopped");
  EXPECT_LT(server.dripped(), 150) << "it waited for the whole reply";
  // A cancelled owner sends nothing more.
  const int connections = server.connections();
  EXPECT_EQ(get(server.url(), 600, cancel).error, "stopped");
  EXPECT_EQ(server.connections(), connections);
}

TEST(HttpClient, NothingListeningSaysSo) {
  // Port 1 on loopback: connection refused at once.
  RequestCancel cancel;
  Reply r = get("http://127.0.0.1:1", 5, cancel);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error,
            "cannot reach http://127.0.0.1:1: no connection (is the server "
            "running and listening there?)");
}

TEST(HttpClient, QueryFieldsArePercentEncoded) {
  EXPECT_EQ(encode_query({{"a b", "c&d=e"}, {"pid", "7"}}),
            "a%20b=c%26d%3De&pid=7");
  EXPECT_EQ(encode_query({}), "");
}

}  // namespace
}  // namespace gd::http
