// top --connect's client against a hostile "serve" (a socket server on a
// thread of the test): a dripping reply ends at the total deadline, endless
// headers at the head's bound, a cancel from another thread ends a request
// at once (and a remote kill job's destructor does not wait on the
// network), a deep reply is refused before it is walked, and the URL's
// port is checked.
#include "monitor/remote_http.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "api/kill_json.h"
#include "common/bounded_json.h"
#include "monitor/kill_job.h"
#include "monitor/remote_feed.h"
#include "monitor/remote_json.h"
#include "monitor/remote_kill.h"

namespace gd::monitor {
namespace {

// Answers one connection at a time as `mode` says: kDrip sends a head,
// then a body byte every 200 ms (at most `drip_bytes`); kHeaders sends
// header lines until the client goes away.
class HostileServer {
 public:
  enum class Mode { kDrip, kHeaders };
  explicit HostileServer(Mode mode, int drip_bytes = 1000)
      : mode_(mode), drip_bytes_(drip_bytes) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), len) != 0 ||
        ::listen(fd_, 4) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
      throw std::runtime_error("cannot listen");
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~HostileServer() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  std::string url() const {
    return "http://127.0.0.1:" + std::to_string(port_);
  }
  // Body bytes sent before the client closed (kDrip).
  int dripped() const { return dripped_; }
  bool client_closed() const { return client_closed_; }

 private:
  bool wait(int fd, short events, int ms) {
    pollfd p{fd, events, 0};
    return ::poll(&p, 1, ms) > 0;
  }
  bool send_all(int fd, const std::string& s) {
    for (size_t off = 0; off < s.size();) {
      if (stop_ || !wait(fd, POLLOUT, 100)) {
        if (stop_) return false;
        continue;
      }
      ssize_t n = ::send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return false;
      off += static_cast<size_t>(n);
    }
    return true;
  }
  void serve() {
    while (!stop_) {
      if (!wait(fd_, POLLIN, 50)) continue;
      int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      std::string head;
      char buf[4096];
      while (head.find("\r\n\r\n") == std::string::npos && !stop_) {
        if (!wait(c, POLLIN, 100)) continue;
        ssize_t n = ::recv(c, buf, sizeof buf, 0);
        if (n <= 0) break;
        head.append(buf, static_cast<size_t>(n));
      }
      if (mode_ == Mode::kDrip) {
        bool open = send_all(c,
                             "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n"
                             "\r\n{");
        while (open && !stop_ && dripped_ < drip_bytes_) {
          // The client closing is seen as readable (EOF) here; a
          // request's body is read and ignored.
          if (wait(c, POLLIN, 200)) {
            if (::recv(c, buf, sizeof buf, 0) > 0) continue;
            client_closed_ = true;
            break;
          }
          open = send_all(c, " ");
          if (open) ++dripped_;
        }
      } else {
        std::string lines;
        for (int i = 0; i < 1000; ++i) lines += "A: b\r\n";
        bool open = send_all(c, "HTTP/1.1 200 OK\r\n");
        while (open && !stop_) open = send_all(c, lines);
        client_closed_ = !stop_;
      }
      ::close(c);
    }
  }

  Mode mode_;
  int drip_bytes_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> dripped_{0};
  std::atomic<bool> client_closed_{false};
  std::thread thread_;
};

BoundedReply get(const std::string& url, double total_s, RequestCancel& cancel,
                 std::string* body = nullptr) {
  RemoteOptions o;
  o.url = url;
  httplib::Request req;
  req.method = "GET";
  req.path = "/api/v1/status";
  std::string ignored;
  std::string& out = body ? *body : ignored;
  req.content_receiver = [&out](const char* d, size_t n, uint64_t, uint64_t) {
    out.append(d, n);
    return true;
  };
  httplib::Response res;
  return send_bounded(o, parse_remote_url(url), total_s, cancel, req, res);
}

TEST(RemoteHttp, ADrippingReplyEndsAtTheTotalDeadline) {
  // One byte every 200 ms: each read is quick, the reply never completes.
  HostileServer server(HostileServer::Mode::kDrip);
  RequestCancel cancel;
  BoundedReply r = get(server.url(), 1, cancel);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error,
            "cannot reach " + server.url() + ": no complete reply within 1s");
  EXPECT_GE(server.dripped(), 2);
}

TEST(RemoteHttp, EndlessHeadersEndAtTheHeadsBound) {
  HostileServer server(HostileServer::Mode::kHeaders);
  RequestCancel cancel;
  BoundedReply r = get(server.url(), 30, cancel);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, server.url() +
                         ": the reply's headers exceed 100 lines or 64 KiB "
                         "(is it a gpudoctor serve?)");
}

TEST(RemoteHttp, ACancelFromAnotherThreadEndsTheRequestAtOnce) {
  // The deadline is far away: only the cancel can end it while the server
  // still drips.
  HostileServer server(HostileServer::Mode::kDrip, 150);
  RequestCancel cancel;
  std::thread quitter([&] {
    while (server.dripped() < 3)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    cancel.cancel();
  });
  BoundedReply r = get(server.url(), 600, cancel);
  quitter.join();
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "stopped");
  EXPECT_LT(server.dripped(), 150) << "it waited for the whole reply";
  // A cancelled owner sends nothing more.
  EXPECT_EQ(get(server.url(), 600, cancel).error, "stopped");
}

TEST(RemoteHttp, ARemoteKillJobsDestructorDoesNotWaitOnTheNetwork) {
  // The plan's reply drips: the job is still planning when it goes.
  HostileServer server(HostileServer::Mode::kDrip, 150);
  {
    RemoteOptions o;
    o.url = server.url();
    KillJob job({1234}, remote_kill_backend(o), {}, [] {});
    while (server.dripped() < 3)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_EQ(job.stage(), KillJob::Stage::kPlanning);
  }
  EXPECT_LT(server.dripped(), 150) << "the destructor waited for the reply";
}

TEST(RemoteJson, RepliesNestedDeeperThan64LevelsAreRefused) {
  auto nested = [](int depth) {
    return std::string(static_cast<size_t>(depth), '[') +
           std::string(static_cast<size_t>(depth), ']');
  };
  EXPECT_NO_THROW(parse_bounded_json(nested(kMaxJsonDepth)));
  EXPECT_THROW(parse_bounded_json(nested(kMaxJsonDepth + 1)), JsonTooDeep);
  EXPECT_TRUE(parse_bounded_json("{").is_discarded());
  // 100,000 objects deep under "header": refused with one line, not a
  // stack overflow in the walk that follows a parse.
  std::string deep = "{\"header\": ";
  for (int i = 0; i < 100000; ++i) deep += "{\"a\": ";
  deep += "1" + std::string(100000, '}') + "}";
  try {
    parse_remote_status(deep);
    ADD_FAILURE() << "accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "nested deeper than 64 levels");
  }
  try {
    api::parse_kill_api_reply("{\"plan\": " + nested(100000) + "}");
    ADD_FAILURE() << "accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "kill reply: nested deeper than 64 levels");
  }
  // Wide is fine: a flat array of a million numbers is one level, and an
  // array of 200,000 objects is read in one pass (nlohmann's parser
  // callback would rescan the array at every object: 2e10 steps).
  std::string wide = "[0";
  for (int i = 0; i < 1000000; ++i) wide += ",0";
  EXPECT_EQ(parse_bounded_json(wide + "]").size(), 1000001u);
  std::string objects = "[{}";
  for (int i = 0; i < 200000; ++i) objects += ",{}";
  EXPECT_EQ(parse_bounded_json(objects + "]").size(), 200001u);
}

TEST(RemoteUrl, PortIsANumberIn1To65535) {
  RemoteUrl u = parse_remote_url("https://[::1]:9856/gpu07/");
  EXPECT_TRUE(u.https);
  EXPECT_EQ(u.host, "::1");
  EXPECT_EQ(u.port, 9856);
  EXPECT_EQ(u.prefix, "/gpu07");
  EXPECT_EQ(parse_remote_url("http://gpu07").port, 80);
  EXPECT_EQ(parse_remote_url("https://gpu07").port, 443);
  EXPECT_EQ(parse_remote_url("http://127.0.0.1:65535").port, 65535);
  for (const char* bad :
       {"http://127.0.0.1:181017078", "http://h:0", "http://h:65536",
        "http://h:", "http://h:80x", "http://h:-1", "http://[::1]:99999"}) {
    try {
      parse_remote_url(bad);
      ADD_FAILURE() << bad;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("is not a number in 1..65535"),
                std::string::npos)
          << e.what();
    }
  }
  EXPECT_THROW(parse_remote_url("http://::1:80"), std::invalid_argument);
  EXPECT_THROW(parse_remote_url("http://[::1"), std::invalid_argument);
}

}  // namespace
}  // namespace gd::monitor
