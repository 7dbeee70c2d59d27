// The Alertmanager client against a tiny in-process fake Alertmanager.
#include "serve/alertmanager_client.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "http_client/fake_server.h"

namespace gd {
namespace {

class FakeAlertmanager {
 public:
  FakeAlertmanager() {
    server_.Post("/prefix/api/v2/alerts",
                 [this](const httplib::Request& req, httplib::Response& res) {
                   std::lock_guard lock(mu_);
                   bodies_.push_back(req.body);
                   content_type_ = req.get_header_value("Content-Type");
                   cv_.notify_all();
                   res.status = 200;
                 });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~FakeAlertmanager() {
    server_.stop();
    thread_.join();
  }
  int port() const { return port_; }
  bool wait_for(size_t n) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(10),
                        [&] { return bodies_.size() >= n; });
  }
  std::vector<std::string> bodies() {
    std::lock_guard lock(mu_);
    return bodies_;
  }
  std::string content_type() {
    std::lock_guard lock(mu_);
    return content_type_;
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> bodies_;
  std::string content_type_;
};

TEST(AlertmanagerClient, PostsBodiesToApiV2UnderThePrefix) {
  FakeAlertmanager am;
  AlertmanagerClient client("http://127.0.0.1:" + std::to_string(am.port()) +
                            "/prefix/");
  client.post(R"([{"labels":{"alertname":"gpu-lost"}}])");
  client.post(R"([{"labels":{"alertname":"xid-error"}}])");
  ASSERT_TRUE(am.wait_for(2));
  auto bodies = am.bodies();
  EXPECT_EQ(nlohmann::json::parse(bodies[0])[0]["labels"]["alertname"],
            "gpu-lost");
  EXPECT_EQ(nlohmann::json::parse(bodies[1])[0]["labels"]["alertname"],
            "xid-error");
  EXPECT_EQ(am.content_type(), "application/json");
  client.stop();
  EXPECT_EQ(client.sent(), 2u);
}

TEST(AlertmanagerClient, UnreachableAlertmanagerCountsFailuresAndDoesNotBlock) {
  // Port 1 on loopback: connection refused at once.
  AlertmanagerClient client("http://127.0.0.1:1");
  const auto t0 = std::chrono::steady_clock::now();
  client.post("[]");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
  for (int i = 0; i < 100 && client.failed() == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(client.failed(), 1u);
}

TEST(AlertmanagerClient, RejectsNonHttpUrls) {
  EXPECT_THROW(AlertmanagerClient("alertmanager:9093"), std::invalid_argument);
  EXPECT_THROW(AlertmanagerClient("ftp://x:21"), std::invalid_argument);
  EXPECT_THROW(AlertmanagerClient("http://"), std::invalid_argument);
  try {
    AlertmanagerClient("http://am:99999");
    ADD_FAILURE() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "--alertmanager: 'http://am:99999': port '99999' is not a "
                 "number in 1..65535");
  }
}

TEST(AlertmanagerClient, StopEndsAPostToAnAlertmanagerThatNeverAnswers) {
  http::testing::FakeServer am(http::testing::FakeServer::Mode::kSilent);
  AlertmanagerClient client(am.url());
  client.post("[]");
  while (am.request().find("\r\n\r\n[]") == std::string::npos)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  // The post waits for a reply (its deadline is 8 s): stop ends it after
  // a grace of 500 ms.
  const auto t0 = std::chrono::steady_clock::now();
  client.stop();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  EXPECT_EQ(client.sent() + client.failed(), 0u);
}

}  // namespace
}  // namespace gd
