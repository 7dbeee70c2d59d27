// GET /api/v1/fleet (serve/fleet_json.h) and the view that serves it
// (serve/fleet_view.h) without HTTP: the nodes in top's order with top's
// status and figures, each GPU's cell, findings and not-judged, the serve
// dashboard's link only from a checked address, hostile text bounded and
// escaped, and a new frame told to the live stream.
#include "serve/fleet_json.h"

#include <gtest/gtest.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <thread>

#include "monitor/fleet_feed.h"
#include "monitor/fleet_rows.h"
#include "serve/event_stream.h"
#include "serve/fleet_view.h"
#include "serve/gzip_body.h"
#include "top/fleet_fixture.h"

namespace gd {
namespace {

using nlohmann::json;

using fleet_test::fleet_frame_of;
using fleet_test::fleet_node;
using fleet_test::kNow;

const json& node_named(const json& doc, const std::string& name) {
  for (const auto& n : doc["nodes"])
    if (n["name"] == name) return n;
  ADD_FAILURE() << "no node " << name;
  static const json none;
  return none;
}

TEST(FleetJson, TopsOrderStatusAndFigures) {
  auto ecc = fleet_node("gpu-ecc", 2, 2);
  ecc.serve_instance = "10.0.0.7:9856";
  // Figures that tell its GPUs apart, and a power that is no round number.
  ecc.sample.gpus[0].util_pct = 97.5;
  ecc.sample.gpus[1].util_pct = 3;
  ecc.sample.gpus[1].temp_c = 62;
  ecc.sample.gpus[0].power_w = 512.25;
  auto refused = fleet_node("gpu-refused", 1);
  refused.error = "a series names GPU 64 of the node";
  refused.sample.gpus.clear();
  auto f = fleet_frame_of({fleet_node("gpu-b", 2), fleet_node("gpu-a", 3), ecc,
                           fleet_node("gpu-old", 150), refused});
  f.window_note = "the last 10 minutes could not be read (HTTP 503)";
  for (auto& n : f.nodes)
    if (n.data.node == "gpu-ecc") {
      n.window_samples = 40;
      n.window_span_s = 585;
    }
  const json doc = json::parse(fleet_json(f, kNow));
  EXPECT_EQ(doc["window_note"], f.window_note);
  EXPECT_EQ(doc["source"], "http://prometheus:9090");
  EXPECT_EQ(doc["t"], kNow);
  EXPECT_EQ(doc["round_s"], 0.25);
  EXPECT_TRUE(doc["error"].is_null());
  EXPECT_EQ(doc["nodes_left_out"], 0);
  EXPECT_EQ(doc["stale_after_s"], 60.0);

  // The order and the figures of top's rows, node for node.
  const auto rows = monitor::fleet_rows(f, "", kNow);
  ASSERT_EQ(doc["nodes"].size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const json& n = doc["nodes"][i];
    EXPECT_EQ(n["name"], rows[i].node->data.node);
    EXPECT_EQ(n["status"], monitor::node_status_name(rows[i].status));
    EXPECT_EQ(n["findings_count"], rows[i].findings);
    EXPECT_EQ(n["age_s"], rows[i].age_s);
  }
  EXPECT_EQ(doc["nodes"][0]["name"], "gpu-ecc");

  const json& e = node_named(doc, "gpu-ecc");
  EXPECT_EQ(e["status"], "ok");
  EXPECT_EQ(e["age_s"], 2.0);
  EXPECT_EQ(e["dashboard"], "http://10.0.0.7:9856/");
  EXPECT_EQ(e["worst_id"], "ecc-uncorrectable");
  EXPECT_EQ(e["worst_severity"], "critical");
  ASSERT_GE(e["findings"].size(), 1u);
  EXPECT_EQ(e["findings"].size(), e["findings_count"]);
  EXPECT_EQ(e["findings"][0]["id"], "ecc-uncorrectable");
  EXPECT_EQ(e["findings"][0]["severity"], "critical");
  EXPECT_EQ(e["findings"][0]["gpus"], json::array({1}));
  EXPECT_FALSE(e["findings"][0]["summary"].get<std::string>().empty());
  EXPECT_TRUE(e["not_judged"].is_array());
  // The window the node view names (top's "its last 40 scrapes (9m)").
  EXPECT_EQ(e["window_samples"], 40);
  EXPECT_EQ(e["window_span_s"], 585.0);
  EXPECT_EQ(node_named(doc, "gpu-a")["window_samples"], 0);
  ASSERT_EQ(e["gpus"].size(), 2u);
  EXPECT_EQ(e["gpus"][0]["index"], 0);
  EXPECT_EQ(e["gpus"][0]["util_pct"], 97.5);
  EXPECT_EQ(e["gpus"][1]["util_pct"], 3.0);
  EXPECT_EQ(e["gpus"][0]["mem_used_bytes"], 40ull << 30);
  EXPECT_EQ(e["gpus"][0]["mem_total_bytes"], 80ull << 30);
  EXPECT_EQ(e["gpus"][1]["temp_c"], 62);
  EXPECT_EQ(e["gpus"][0]["power_w"], 512.25);

  EXPECT_EQ(node_named(doc, "gpu-old")["status"], "stale");
  EXPECT_EQ(node_named(doc, "gpu-old")["age_s"], 150.0);
  const json& r = node_named(doc, "gpu-refused");
  EXPECT_EQ(r["status"], "refused");
  EXPECT_EQ(r["error"], "a series names GPU 64 of the node");
  // Its GPUs known from its header, without values.
  ASSERT_EQ(r["gpus"].size(), 2u);
  EXPECT_TRUE(r["gpus"][0]["util_pct"].is_null());
  // Scraped only through dcgm-exporter: no link.
  EXPECT_TRUE(node_named(doc, "gpu-a")["dashboard"].is_null());
  EXPECT_TRUE(node_named(doc, "gpu-a")["worst_id"].is_null());
}

TEST(FleetJson, GoneNodesAndAFailedRound) {
  auto first = fleet_frame_of({fleet_node("gpu-a", 1), fleet_node("gpu-b", 1)});
  auto second = fleet_frame_of({fleet_node("gpu-a", 1)}, first.nodes);
  second.error = "the round ran out of its deadline (10 s)";
  const json doc = json::parse(fleet_json(second, kNow + 400));
  EXPECT_EQ(doc["error"], "the round ran out of its deadline (10 s)");
  ASSERT_EQ(doc["nodes"].size(), 2u);
  EXPECT_EQ(doc["nodes"][0]["name"], "gpu-b");
  EXPECT_EQ(doc["nodes"][0]["status"], "gone");
  EXPECT_EQ(doc["nodes"][0]["age_s"], 401.0);
}

TEST(FleetJson, BeforeTheFirstRound) {
  monitor::FleetFrame f;
  f.source = "http://prometheus:9090";
  const json doc = json::parse(fleet_json(f, kNow));
  EXPECT_TRUE(doc["t"].is_null());
  EXPECT_TRUE(doc["nodes"].empty());
}

TEST(FleetJson, HostileTextIsEscapedAndCut) {
  auto n = fleet_node("gpu-a", 1);
  n.error = std::string(5000, 'x') + "\"<script>\n\x01";
  // A link only from a checked address.
  n.serve_instance = "evil\"><script>:9856";
  auto f = fleet_frame_of({n});
  f.source = "http://p/\"\n";
  const std::string body = fleet_json(f, kNow);
  const json doc = json::parse(body);  // valid JSON
  const json& a = doc["nodes"][0];
  EXPECT_LE(a["error"].get<std::string>().size(), kMaxFleetText + 64);
  EXPECT_TRUE(a["dashboard"].is_null());
  EXPECT_EQ(body.find('\n'), std::string::npos);
}

TEST(FleetJson, AtMostSomeFindingsANodeTheCountWhole) {
  auto f = fleet_frame_of({fleet_node("gpu-a", 1)});
  auto& judged = f.nodes[0].judged;
  for (size_t i = 0; i < kMaxFleetFindingsShown + 10; ++i) {
    check::CheckFinding c;
    c.finding.id = "made-up-" + std::to_string(i);
    c.finding.severity = "warning";
    c.finding.title = "a finding";
    judged.findings.push_back(c);
  }
  const json doc = json::parse(fleet_json(f, kNow));
  EXPECT_EQ(doc["nodes"][0]["findings"].size(), kMaxFleetFindingsShown);
  EXPECT_EQ(doc["nodes"][0]["findings_count"], kMaxFleetFindingsShown + 10);
}

// The largest fleet a round keeps: every node of 8 GPUs, one finding and
// serve's address each. The reply stays a few MB.
TEST(FleetJson, TheLargestFleetStaysBounded) {
  std::vector<promsource::FleetNode> nodes;
  for (size_t i = 0; i < promsource::kMaxFleetNodes; ++i) {
    auto n = fleet_node("gpu-" + std::to_string(10000 + i), 1, i % 10 == 0);
    n.serve_instance = n.node + ":9856";
    for (int g = 2; g < 8; ++g) {
      n.header.gpus.push_back(n.header.gpus[0]);
      n.header.gpus.back().index = g;
      n.sample.gpus.push_back(n.sample.gpus[0]);
      n.sample.gpus.back().index = g;
    }
    nodes.push_back(std::move(n));
  }
  auto f = fleet_frame_of(std::move(nodes));
  const auto t0 = std::chrono::steady_clock::now();
  const std::string body = fleet_json(f, kNow);
  const double ms = std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - t0)
                        .count();
  const json doc = json::parse(body);
  EXPECT_EQ(doc["nodes"].size(), promsource::kMaxFleetNodes);
  EXPECT_EQ(doc["nodes"][0]["worst_severity"], "critical");
  EXPECT_LT(body.size(), 16u << 20) << body.size();
  std::printf("%zu nodes of 8 GPUs: %zu bytes in %.1f ms\n",
              promsource::kMaxFleetNodes, body.size(), ms);
}

TEST(FleetJson, DashboardUrlOnlyOfACheckedAddress) {
  EXPECT_EQ(serve_dashboard_url("gpu-a:9856"), "http://gpu-a:9856/");
  EXPECT_EQ(serve_dashboard_url("[fd00::7]:9856"), "http://[fd00::7]:9856/");
  EXPECT_EQ(serve_dashboard_url(""), "");
  EXPECT_EQ(serve_dashboard_url("gpu-a"), "");
  EXPECT_EQ(serve_dashboard_url("javascript:alert(1)"), "");
  EXPECT_EQ(serve_dashboard_url("a/b:1"), "");
}

TEST(FleetJson, TheEventIsSmallAndOneLine) {
  auto f = fleet_frame_of({fleet_node("gpu-a", 1), fleet_node("gpu-b", 1)});
  const std::string e = fleet_event(f);
  ASSERT_EQ(e.rfind("event: fleet\ndata: ", 0), 0u) << e;
  ASSERT_EQ(e.substr(e.size() - 2), "\n\n");
  const std::string data = e.substr(19, e.size() - 21);
  EXPECT_EQ(data.find('\n'), std::string::npos);
  const json d = json::parse(data);
  EXPECT_EQ(d["seq"], 7);
  EXPECT_EQ(d["nodes"], 2);
}

// A source the test publishes frames into.
class FakeFleetSource : public monitor::FleetSource {
 public:
  FakeFleetSource() : fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {}
  ~FakeFleetSource() override { ::close(fd_); }
  void start() override { started = true; }
  void stop() override { stopped = true; }
  void refresh() override {}
  std::shared_ptr<const monitor::FleetFrame> latest() const override {
    std::lock_guard lock(mu_);
    return frame_;
  }
  int wake_fd() const override { return fd_; }
  void drain_wake() override {
    uint64_t n = 0;
    [[maybe_unused]] auto r = ::read(fd_, &n, sizeof n);
  }
  void publish(monitor::FleetFrame f) {
    {
      std::lock_guard lock(mu_);
      frame_ = std::make_shared<const monitor::FleetFrame>(std::move(f));
    }
    const uint64_t one = 1;
    [[maybe_unused]] auto r = ::write(fd_, &one, sizeof one);
  }
  bool started = false, stopped = false;

 private:
  int fd_;
  mutable std::mutex mu_;
  std::shared_ptr<const monitor::FleetFrame> frame_;
};

std::string gunzip(const std::string& gz) {
  z_stream z{};
  EXPECT_EQ(inflateInit2(&z, 15 + 16), Z_OK);
  std::string out(1 << 20, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  z.avail_in = static_cast<uInt>(gz.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(inflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  inflateEnd(&z);
  return out;
}

TEST(GzipBody, ASmallerBodyThatInflatesBack) {
  std::string body;
  for (int i = 0; i < 2000; ++i)
    body += "{\"name\":\"gpu-" + std::to_string(i) + "\",\"status\":\"ok\"},";
  const std::string gz = gzip_body(body);
  EXPECT_LT(gz.size(), body.size() / 5);
  EXPECT_EQ(gunzip(gz), body);
  EXPECT_EQ(gunzip(gzip_body("")), "");
}

TEST(FleetView, AnswersTheNewestFrameAndTellsTheStream) {
  auto source = std::make_unique<FakeFleetSource>();
  FakeFleetSource* fake = source.get();
  EventHub hub(4, 64 * 1024);
  FleetView view(std::move(source), &hub);
  EXPECT_EQ(view.reply(kNow).status, 503);  // nothing read yet
  auto stream = hub.open();
  view.start();
  EXPECT_TRUE(fake->started);
  fake->publish(fleet_frame_of({fleet_node("gpu-a", 1)}));
  std::string got;
  for (int i = 0; i < 500 && got.find("event: fleet") == std::string::npos;
       ++i) {
    char buf[4096];
    size_t n = 0;
    stream->read(buf, sizeof buf, n);
    got.append(buf, n);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_NE(got.find("event: fleet\ndata: {\"seq\":7"), std::string::npos)
      << got;
  ApiReply r = view.reply(kNow);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(json::parse(r.text())["nodes"][0]["name"], "gpu-a");
  // Two replies of one second share the body rendered once.
  EXPECT_EQ(view.reply(kNow).text().data(), r.text().data());
  // To a client that accepts gzip: the same body, compressed.
  ApiReply gz = view.reply(kNow, true);
  EXPECT_EQ(gz.status, 200);
  bool gzip_header = false;
  for (const auto& [k, v] : gz.headers)
    gzip_header |= k == "Content-Encoding" && v == "gzip";
  EXPECT_TRUE(gzip_header);
  EXPECT_EQ(gunzip(std::string(gz.text())), r.text());
  // A stream opened later is primed with the newest fleet event.
  auto later = hub.open();
  char buf[4096];
  size_t n = 0;
  later->read(buf, sizeof buf, n);
  EXPECT_NE(std::string(buf, n).find("event: fleet"), std::string::npos);
  view.stop();
  EXPECT_TRUE(fake->stopped);
}

}  // namespace
}  // namespace gd
