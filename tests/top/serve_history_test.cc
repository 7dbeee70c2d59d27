#include "monitor/serve_history.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <thread>

#include "views/ps_history_view.h"

namespace gd::monitor {
namespace {

TEST(Sparkline, ScalesMinToMax) {
  EXPECT_EQ(sparkline({}), "");
  EXPECT_EQ(sparkline({1, 1, 1}), "▁▁▁");
  EXPECT_EQ(sparkline({0, 7}), "▁█");
  EXPECT_EQ(sparkline({0, 3.5, 7}), "▁▅█");
  // A 0.6% wobble of 40 GiB draws flat; a 10% climb still shows.
  const double g = 1024.0 * 1024 * 1024;
  EXPECT_EQ(sparkline({40 * g, 40.24 * g, 40 * g, 40.1 * g}), "▁▁▁▁");
  EXPECT_EQ(sparkline({100, 105, 110}), "▁▄▇");
}

TEST(FetchHistory, AsksServeOncePerPid) {
  httplib::Server server;
  std::vector<std::string> pids_asked;
  server.Get("/api/v1/history",
             [&](const httplib::Request& req, httplib::Response& res) {
               pids_asked.push_back(req.get_param_value("pid"));
               EXPECT_EQ(req.get_param_value("metric"), "process.used_bytes");
               EXPECT_EQ(req.get_param_value("since"), "10m");
               if (req.get_param_value("pid") == "7") {
                 res.set_content(R"({"series":[]})", "application/json");
                 return;
               }
               res.set_content(R"({"series":[{"gpu":1,"pid":)" +
                                   req.get_param_value("pid") +
                                   R"(,"points":[[1,10],[2,20]]}]})",
                               "application/json");
             });
  int port = server.bind_to_any_port("127.0.0.1");
  ASSERT_GT(port, 0);
  std::thread t([&] { server.listen_after_bind(); });
  while (!server.is_running())
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  auto h = fetch_process_memory_history(
      "http://127.0.0.1:" + std::to_string(port), {5, 7});
  server.stop();
  t.join();
  EXPECT_EQ(pids_asked, (std::vector<std::string>{"5", "7"}));
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[5][0].gpu, 1);
  EXPECT_EQ(h[5][0].points.size(), 2u);
}

TEST(FetchHistory, NoServeIsEmptyNotAnError) {
  httplib::Server probe;  // a port nobody listens on after probe closes
  int port = probe.bind_to_any_port("127.0.0.1");
  probe.stop();
  auto h = fetch_process_memory_history(
      "http://127.0.0.1:" + std::to_string(port), {1, 2, 3});
  EXPECT_TRUE(h.empty());
  EXPECT_TRUE(fetch_process_memory_history("not a url at all", {1}).empty());
}

TEST(FetchFromServe, BodyOn200NothingOtherwise) {
  httplib::Server server;
  std::string asked;
  server.Get("/api/v1/export",
             [&](const httplib::Request& req, httplib::Response& res) {
               asked = req.get_param_value("since");
               res.set_content("trace bytes", "application/zstd");
             });
  server.Get("/api/v1/busy",
             [](const httplib::Request&, httplib::Response& res) {
               res.status = 503;
               res.set_content(R"({"error":"busy"})", "application/json");
             });
  int port = server.bind_to_any_port("127.0.0.1");
  ASSERT_GT(port, 0);
  std::thread t([&] { server.listen_after_bind(); });
  while (!server.is_running())
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  auto body = fetch_from_serve(url, "/api/v1/export?since=10m");
  auto busy = fetch_from_serve(url, "/api/v1/busy");
  server.stop();
  t.join();
  ASSERT_TRUE(body);
  EXPECT_EQ(*body, "trace bytes");
  EXPECT_EQ(asked, "10m");
  EXPECT_FALSE(busy);  // an error reply is no history
  EXPECT_FALSE(fetch_from_serve(url, "/api/v1/export"));  // serve is gone
  EXPECT_FALSE(fetch_from_serve("https://127.0.0.1:1", "/"));
}

}  // namespace
}  // namespace gd::monitor
