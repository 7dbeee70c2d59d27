// HttpServer against hostile and careless clients: Host check, methods and
// bodies, header floods, slow handlers kept off the event loop, error text
// kept out of replies, a port already served.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <stdexcept>
#include <thread>
#include <vector>

#include "collect/sampler.h"
#include "raw_http.h"
#include "serve/http_server.h"

namespace gd {
namespace {

using test::RawReply;
using test::request;

// A history whose queries wait until released (or throw a message that
// names a file, like a real SQLite error would).
class GateHistory : public History {
 public:
  void set_header(const TraceHeader&) override {}
  void append(const Sample&) override {}
  void flush() override {}
  void maintain(double) override {}
  std::string query_json(const HistoryQuery&) const override {
    ++running;
    if (throws)
      throw std::runtime_error("/var/lib/gpudoctor/history.db: disk I/O error");
    gate.wait();
    return "{\"points\":[]}";
  }
  void release() { open.set_value(); }
  bool throws = false;
  mutable std::atomic<int> running{0};

 private:
  std::promise<void> open;
  std::shared_future<void> gate = open.get_future().share();
};

class Server : public ::testing::Test {
 protected:
  void start(std::vector<std::string> allowed = {}) {
    server = std::make_unique<HttpServer>(box, &history, std::move(allowed));
    server->bind("127.0.0.1", 0);
    server->start();
    port = server->port();
  }
  void TearDown() override {
    if (!released) history.release();
    if (server) server->stop();
  }
  static std::shared_ptr<Snapshot> starting() {
    auto s = std::make_shared<Snapshot>();
    s->started_at = unix_now();  // /healthz: 200 "starting"
    return s;
  }
  SnapshotBox box{starting()};
  GateHistory history;
  std::unique_ptr<HttpServer> server;
  int port = 0;
  bool released = false;
};

const char kHistory[] = "/api/v1/history?metric=gpu.util_pct&since=1h";

TEST_F(Server, ForeignHostOnLoopbackIs403WithJsonError) {
  start();
  RawReply r = request(port, "/metrics", "Host: rebind.evil.example:9856\r\n");
  EXPECT_EQ(r.status, 403);
  EXPECT_NE(r.head.find("application/json"), std::string::npos) << r.head;
  EXPECT_EQ(r.body.rfind("{\"error\":", 0), 0u) << r.body;
  EXPECT_EQ(request(port, "/metrics", "Host: localhost:9856\r\n").status, 200);
  EXPECT_EQ(request(port, "/metrics", "Host: [::1]:9856\r\n").status, 200);
}

TEST_F(Server, AllowedHostIsAnswered) {
  start({"gpu7.example"});
  EXPECT_EQ(request(port, "/metrics", "Host: gpu7.example:9856\r\n").status,
            200);
  EXPECT_EQ(request(port, "/metrics", "Host: gpu8.example:9856\r\n").status,
            403);
}

TEST_F(Server, OnlyGetAndHeadWithoutBodies) {
  start();
  RawReply post = request(port, "/metrics", "Host: localhost\r\n", "POST");
  EXPECT_EQ(post.status, 405);
  EXPECT_NE(post.head.find("Allow: GET, HEAD"), std::string::npos) << post.head;
  EXPECT_EQ(request(port, "/metrics", "Host: localhost\r\n", "DELETE").status,
            405);
  // A small body is read and dropped, a large one refused unread; both 413.
  for (std::string length : {"5", "104857600"}) {
    int fd = test::connect_local(port);
    ASSERT_GE(fd, 0);
    test::send_all(
        fd, "GET /metrics HTTP/1.1\r\nHost: localhost\r\nContent-Length: " +
                length + "\r\nConnection: close\r\n\r\nhello");
    RawReply body = test::read_reply(fd);
    close(fd);
    EXPECT_EQ(body.status, 413) << length;
  }
  RawReply head = request(port, "/metrics", "Host: localhost\r\n", "HEAD");
  EXPECT_EQ(head.status, 200);
  EXPECT_TRUE(head.body.empty());
}

// Behind a proxy that reads the other header, two Host or two
// Content-Length headers make a smuggled request: refused, whatever the
// values, on every path.
TEST_F(Server, TwoHostOrContentLengthHeadersAre400) {
  start();
  const std::string two_hosts = "Host: localhost\r\nHost: localhost\r\n";
  RawReply r = request(port, "/metrics", two_hosts);
  EXPECT_EQ(r.status, 400) << r.head;
  EXPECT_EQ(r.body, R"({"error":"more than one Host header in the request"})");
  EXPECT_EQ(
      request(port, "/metrics", "Host: localhost\r\nhOsT: evil\r\n").status,
      400);
  EXPECT_EQ(request(port, "/api/v1/kill", two_hosts, "POST").status, 400);
  r = request(port, "/healthz",
              "Host: localhost\r\nContent-Length: 0\r\n"
              "Content-Length: 0\r\n");
  EXPECT_EQ(r.status, 400) << r.head;
  EXPECT_EQ(
      r.body,
      R"({"error":"more than one Content-Length header in the request"})");
  EXPECT_EQ(
      request(port, "/healthz", "Host: localhost\r\nContent-Length: 0\r\n")
          .status,
      200);
}

TEST_F(Server, FortyThousandHeadersAreRefusedAndItKeepsServing) {
  start();
  std::string headers = "Host: localhost\r\n";
  for (int i = 0; i < 40000; ++i)
    headers +=
        "X-Flood-" + std::to_string(i) + ": " + std::string(32, 'v') + "\r\n";
  RawReply r = request(port, "/metrics", headers);
  EXPECT_TRUE(r.status == 431 || r.status == 0) << r.head;
  EXPECT_EQ(request(port, "/healthz").status, 200);
}

TEST_F(Server, SlowHistoryDoesNotHoldHealthzOrMetrics) {
  start();
  std::vector<std::future<RawReply>> slow;
  for (int i = 0; i < 2; ++i)
    slow.push_back(std::async(std::launch::async,
                              [&] { return request(port, kHistory); }));
  while (history.running < 2) std::this_thread::yield();
  // Both history queries are stuck in SQLite; the cheap endpoints answer.
  EXPECT_EQ(request(port, "/healthz").status, 200);
  EXPECT_EQ(request(port, "/metrics").status, 200);
  history.release();
  released = true;
  for (auto& f : slow) EXPECT_EQ(f.get().status, 200);
}

TEST_F(Server, SlowRequestsPastTheQueueAre503) {
  start();
  constexpr int kClients = 40;
  std::vector<int> fds;
  for (int i = 0; i < kClients; ++i) {
    int fd = test::connect_local(port);
    ASSERT_GE(fd, 0);
    test::send_all(
        fd, std::string("GET ") + kHistory +
                " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    fds.push_back(fd);
  }
  // Replies that come while every query is stuck: only refusals.
  int refused = 0;
  for (int& fd : fds) {
    RawReply r = test::read_reply(fd, 300);
    if (r.status != 0) {
      EXPECT_EQ(r.status, 503) << r.head;
      EXPECT_EQ(r.body.rfind("{\"error\":", 0), 0u) << r.body;
      ++refused;
      close(fd);
      fd = -1;
    }
  }
  EXPECT_GT(refused, 0);
  history.release();
  released = true;
  for (int fd : fds)
    if (fd >= 0) close(fd);
  EXPECT_EQ(request(port, kHistory).status, 200);
}

TEST_F(Server, HandlerErrorIs500WithoutItsText) {
  history.throws = true;
  start();
  RawReply r = request(port, kHistory);
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(r.body, "{\"error\":\"internal error\"}");
}

TEST_F(Server, PortAlreadyServedIsRefusedWithAClearLine) {
  start();
  HttpServer second(box, nullptr);
  try {
    second.bind("127.0.0.1", port);
    FAIL() << "a second server bound port " << port;
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(
        std::string(e.what()),
        "cannot listen on 127.0.0.1:" + std::to_string(port) +
            ": address already in use (is another gpudoctor serve running?)");
  }
}

}  // namespace
}  // namespace gd
