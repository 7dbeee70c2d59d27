// top --connect URL,URL,... and the fleet's node view: the serve list and
// its file (bounded, errors naming FILE:LINE), the merge of a round with
// nodes that did not answer, the processes of the node view from a sample
// and from serve's gpudoctor_process_* series, and a feed whose round never
// waits on a hung serve.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "http_client/fake_server.h"
#include "http_client/url.h"
#include "monitor/fleet_feed.h"
#include "monitor/fleet_processes.h"
#include "monitor/serve_fleet_feed.h"
#include "promsource/fleet_state.h"
#include "views/top/fleet.h"

namespace gd::monitor {
namespace {

constexpr double kAt = 1732262400.0;

std::string write_list(const std::string& text) {
  char path[] = "/tmp/gd_serve_list_XXXXXX";
  const int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  ::close(fd);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::string list_error(const std::string& text) {
  const std::string path = write_list(text);
  std::string what;
  try {
    read_serve_file(path);
  } catch (const std::invalid_argument& e) {
    what = e.what();
  }
  std::remove(path.c_str());
  return what.empty() ? what : what.substr(path.size());
}

TEST(ServeList, CommaSeparatedUrlsEachChecked) {
  EXPECT_EQ(parse_serve_list("http://a:9856,https://b:9856/gd"),
            (std::vector<std::string>{"http://a:9856", "https://b:9856/gd"}));
  EXPECT_THROW(parse_serve_list("http://a:9856,,http://b:9856"),
               std::invalid_argument);
  EXPECT_THROW(parse_serve_list("http://a:9856,ftp://b"),
               std::invalid_argument);
  EXPECT_THROW(parse_serve_list("http://a:9856,http://a:9856"),
               std::invalid_argument);
  EXPECT_THROW(parse_serve_list("http://a:9856?x=1,http://b:1"),
               std::invalid_argument);
}

TEST(ServeList, AFileOfUrlsWithCommentsAndBlankLines) {
  const std::string path = write_list(
      "# the rack\n\nhttp://gpu01:9856   # first\n  http://gpu02:9856\r\n"
      "\t\n");
  EXPECT_EQ(
      read_serve_file(path),
      (std::vector<std::string>{"http://gpu01:9856", "http://gpu02:9856"}));
  std::remove(path.c_str());
  EXPECT_EQ(list_error("http://a:1\n# c\ngpu03:9856\n").substr(0, 4), ":3: ");
  EXPECT_EQ(list_error("http://a:1\nhttp://a:1\n"),
            ":2: 'http://a:1' is listed twice");
  EXPECT_EQ(list_error("# nothing\n\n"), ": no serve URL in it");
  EXPECT_EQ(list_error("http://a:1\n" + std::string(5000, 'x') + "\n"),
            ":2: longer than 2048 characters");
  std::string many;
  for (size_t i = 0; i <= promsource::kMaxFleetNodes; ++i)
    many += "http://n" + std::to_string(i) + ":9856\n";
  EXPECT_EQ(list_error(many), ":2049: more than 2048 serve URLs");
  EXPECT_THROW(read_serve_file("/nonexistent/serves.txt"),
               std::invalid_argument);
}

ServeReply reply_of(const std::string& host, const std::string& finding = "",
                    const std::string& severity = "") {
  ServeReply r;
  r.header.host.hostname = host;
  GpuInfo info;
  info.index = 0;
  info.memory_total_bytes = 80ull << 30;
  r.header.gpus.push_back(info);
  Sample s;
  s.t = kAt;
  GpuSample g;
  g.index = 0;
  g.util_pct = 50;
  std::vector<GpuProcess> procs(1);
  procs[0].pid = 4242;
  procs[0].used_bytes = 10ull << 30;
  g.processes = procs;
  s.gpus.push_back(g);
  ProcessSample p;
  p.pid = 4242;
  p.user = "alice";
  p.name = "python3";
  p.cpu_pct = 97;
  s.processes.push_back(p);
  r.sample = s;
  if (!finding.empty()) {
    Finding f;
    f.id = finding;
    f.severity = severity;
    f.title = finding + " on GPU 0";
    r.findings.findings.push_back(f);
  }
  r.at = kAt;
  return r;
}

TEST(ServeRound, NodesThatDidNotAnswerKeepTheirLastValuesMarked) {
  std::vector<ServeNodeSlot> slots(4);
  slots[0] = {"http://a:1", "a:1", reply_of("gpu-ok"), "", true};
  slots[1] = {"http://b:1", "b:1",
              reply_of("gpu-ecc", "ecc-uncorrectable", "critical"), "", true};
  // Answered before; its newest pair failed.
  slots[2] = {"http://c:1", "c:1", reply_of("gpu-down"),
              "cannot reach http://c:1: Connection refused", false};
  // Never answered.
  slots[3] = {"http://d:1", "d:1", std::nullopt,
              "cannot reach http://d:1: Connection refused", false};
  auto nodes = serve_round_nodes(slots);
  ASSERT_EQ(nodes.size(), 4u);
  FleetFrame f;
  f.t = kAt;
  f.interval_s = 5;
  f.nodes = nodes;
  auto rows = top::fleet_rows(f, "", kAt + 30);
  std::vector<std::string> names;
  for (const auto& r : rows) names.push_back(r.node->data.node);
  // Serve's own critical finding first, then the one that never answered,
  // the one not answering, the healthy one.
  EXPECT_EQ(names,
            (std::vector<std::string>{"gpu-ecc", "d:1", "gpu-down", "gpu-ok"}));
  EXPECT_EQ(rows[0].worst_id, "ecc-uncorrectable");
  EXPECT_EQ(rows[1].status, top::NodeStatus::kRefused);
  EXPECT_NE(rows[1].node->data.error.find("Connection refused"),
            std::string::npos);
  EXPECT_EQ(rows[2].status, top::NodeStatus::kGone);
  EXPECT_EQ(rows[2].age_s, 30);
  EXPECT_NE(rows[2].node->problem.find("Connection refused"),
            std::string::npos);
  EXPECT_EQ(rows[2].node->data.sample.gpus.size(), 1u);  // its last values
  EXPECT_EQ(rows[3].status, top::NodeStatus::kOk);
  EXPECT_TRUE(rows[3].node->problem.empty());
}

TEST(ServeRound, TwoServesOfOneHostnameAreTwoRows) {
  std::vector<ServeNodeSlot> slots(2);
  slots[0] = {"http://a:1", "a:1", reply_of("gpu"), "", true};
  slots[1] = {"http://b:2", "b:2", reply_of("gpu"), "", true};
  auto nodes = serve_round_nodes(slots);
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].data.node, "gpu");
  EXPECT_EQ(nodes[1].data.node, "gpu (b:2)");
}

TEST(FleetProcessRows, FromASampleJoinedByPid) {
  auto r = reply_of("gpu-a");
  auto p = fleet_processes_of("gpu-a", *r.sample);
  ASSERT_EQ(p.rows.size(), 1u);
  EXPECT_EQ(p.rows[0].pid, "4242");
  EXPECT_EQ(p.rows[0].user, "alice");
  EXPECT_EQ(p.rows[0].name, "python3");
  EXPECT_EQ(p.rows[0].gpu_mem_bytes, 10ull << 30);
  EXPECT_EQ(p.rows[0].cpu_pct, 97);
  EXPECT_TRUE(p.note.empty());
}

http::prom::Series series(const std::string& name, const std::string& gpu,
                          const std::string& pid, const std::string& comm,
                          double v) {
  http::prom::Series s;
  s.labels = {{"Hostname", "gpu-a"}, {"__name__", name}, {"comm", comm},
              {"gpu", gpu},          {"pid", pid},       {"user", "bob"}};
  s.points = {{kAt, v}};
  return s;
}

TEST(FleetProcessRows, FromServesSeriesOneQueryForTheNode) {
  const std::string q = fleet_process_query("gpu-a");
  EXPECT_NE(q.find("gpudoctor_process_gpu_memory_bytes|gpudoctor_process_cpu_"
                   "percent|gpudoctor_gpu_processes\",Hostname=\"gpu-a\"}"),
            std::string::npos)
      << q;
  EXPECT_THROW(fleet_process_query("a\"}or{"), std::invalid_argument);

  const std::string hostile = "\x1b]0;pwned\x07" + std::string(300, 'n');
  std::vector<http::prom::Series> answer = {
      series("gpudoctor_process_gpu_memory_bytes", "1", "77", "train", 2e9),
      series("gpudoctor_process_cpu_percent", "1", "77", "train", 150),
      series("gpudoctor_process_gpu_memory_bytes", "0", "88", hostile, 5e9),
      series("gpudoctor_process_gpu_memory_bytes", "x", "99", "junk", 1),
      series("gpudoctor_gpu_processes", "0", "", "", 1)};
  auto p = fleet_processes_from_series("gpu-a", answer);
  ASSERT_EQ(p.rows.size(), 2u);
  EXPECT_TRUE(p.note.empty());
  EXPECT_EQ(p.rows[0].pid, "88");  // by GPU
  EXPECT_LE(p.rows[0].name.size(), kMaxFleetProcessText);
  EXPECT_EQ(p.rows[1].pid, "77");
  EXPECT_EQ(p.rows[1].name, "train");
  EXPECT_EQ(p.rows[1].user, "bob");
  EXPECT_EQ(p.rows[1].gpu_mem_bytes, 2000000000u);
  EXPECT_EQ(p.rows[1].cpu_pct, 150);

  // dcgm-exporter's series only: nothing says serve runs there.
  auto none = fleet_processes_from_series("gpu-a", {});
  EXPECT_TRUE(none.rows.empty());
  EXPECT_EQ(none.note, kProcessesNotReported);
  // serve there, no process on its GPUs.
  auto idle = fleet_processes_from_series(
      "gpu-a", {series("gpudoctor_gpu_processes", "0", "", "", 0)});
  EXPECT_TRUE(idle.note.empty());
  EXPECT_TRUE(idle.rows.empty());

  // Bounded however many series come.
  std::vector<http::prom::Series> flood;
  for (int i = 0; i < 1000; ++i)
    flood.push_back(series("gpudoctor_process_gpu_memory_bytes", "0",
                           std::to_string(i), "p", i));
  auto bounded = fleet_processes_from_series("gpu-a", flood);
  EXPECT_EQ(bounded.rows.size(), kMaxFleetProcesses);
  EXPECT_EQ(bounded.left_out, 1000 - kMaxFleetProcesses);
  EXPECT_EQ(bounded.rows[0].pid, "999");  // the largest holders kept
}

TEST(FleetProcessRows, TheNodeViewShowsThemSanitised) {
  std::vector<ServeNodeSlot> slots(1);
  slots[0] = {"http://a:1", "a:1", reply_of("gpu-a"), "", true};
  slots[0].last->sample->processes[0].name = "\x1b[2Jevil\x07name";
  FleetFrame f;
  f.t = kAt;
  f.source = "1 serves";
  f.nodes = serve_round_nodes(slots);
  f.processes = fleet_processes_of("gpu-a", f.nodes[0].data.sample);
  top::FleetViewState st;
  st.open = "gpu-a";
  auto rows = top::fleet_rows(f, "", kAt);
  top::FleetLayoutInput in;
  in.frame = &f;
  in.rows = &rows;
  in.state = &st;
  in.now = kAt;
  const std::string t = top::fleet_layout(in, 120, 40).text();
  EXPECT_EQ(t.find('\x1b'), std::string::npos);
  EXPECT_EQ(t.find('\x07'), std::string::npos);
  EXPECT_NE(t.find("processes (1)"), std::string::npos) << t;
  EXPECT_NE(t.find("alice"), std::string::npos) << t;
  EXPECT_NE(t.find("evil"), std::string::npos) << t;
  EXPECT_NE(t.find("10.0 GiB"), std::string::npos) << t;
  // Another node's processes are not shown as this one's.
  f.processes.node = "gpu-b";
  const std::string u = top::fleet_layout(in, 120, 40).text();
  EXPECT_NE(u.find("reading ..."), std::string::npos) << u;
}

TEST(ServeFleetFeed, ARoundDoesNotWaitOnAHungServeAndStopIsPrompt) {
  // Its reply drips a byte at a time, within its 30 s deadline.
  http::testing::FakeServer hung(http::testing::FakeServer::Mode::kDrip, "",
                                 100000);
  ServeFleetOptions o;
  o.source = "test";
  o.urls = {hung.url(), "http://127.0.0.1:1"};
  o.interval_s = 1;  // the round's deadline: the interval
  o.request_timeout_s = 30;
  o.max_in_flight = 2;
  ServeFleetFeed feed(o);
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  feed.start();
  std::shared_ptr<const FleetFrame> f;
  for (int i = 0; i < 500; ++i) {
    f = feed.latest();
    if (f->t > 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const double first = std::chrono::duration<double>(Clock::now() - t0).count();
  ASSERT_GT(f->t, 0);
  EXPECT_LT(first, 2.5);  // published at the round's deadline
  ASSERT_EQ(f->nodes.size(), 2u);
  for (const auto& n : f->nodes) EXPECT_FALSE(n.listed);
  const std::string hung_name = hung.url().substr(7);  // host:port
  const FleetNodeState& h =
      f->nodes[0].data.node == hung_name ? f->nodes[0] : f->nodes[1];
  EXPECT_EQ(h.data.node, hung_name);
  EXPECT_EQ(h.data.error, "no answer within the round");
  EXPECT_GT(hung.dripped(), 0);  // still in flight
  const auto t1 = Clock::now();
  feed.stop();
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t1).count(), 1.0);
  EXPECT_LT(hung.dripped(), 100000);
}

TEST(ServeFleetFeed, APublishedRoundListsTheNodeThatRefusedWithItsError) {
  ServeFleetOptions o;
  o.source = "test";
  o.urls = {"http://127.0.0.1:1", "http://127.0.0.1:2"};
  o.interval_s = 1;
  o.request_timeout_s = 0.5;
  ServeFleetFeed feed(o);
  feed.start();
  std::shared_ptr<const FleetFrame> f;
  for (int i = 0; i < 300; ++i) {
    f = feed.latest();
    if (f->t > 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  feed.stop();
  ASSERT_GT(f->t, 0);
  ASSERT_EQ(f->nodes.size(), 2u);
  EXPECT_EQ(f->nodes[0].data.node, "127.0.0.1:1");
  EXPECT_NE(f->nodes[0].data.error.find("cannot reach http://127.0.0.1:1: "),
            std::string::npos)
      << f->nodes[0].data.error;
  EXPECT_GE(feed.requests_sent(), 2u);
}

}  // namespace
}  // namespace gd::monitor

namespace gd::monitor {
namespace {

std::string http_json(const std::string& body) {
  return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
         "Content-Length: " +
         std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
}

TEST(FleetFeedProcesses, OpeningANodeAsksItsProcessSeriesOnTheFeedThread) {
  // Every query is answered with serve's process series of gpu-a (the
  // round's own queries find no node in them).
  const std::string body =
      R"({"status":"success","data":{"resultType":"matrix","result":[)"
      R"({"metric":{"__name__":"gpudoctor_process_gpu_memory_bytes",)"
      R"("Hostname":"gpu-a","gpu":"0","pid":"77","comm":"train",)"
      R"("user":"bob"},"values":[[1732262400,"2000000000"]]},)"
      R"({"metric":{"__name__":"gpudoctor_process_cpu_percent",)"
      R"("Hostname":"gpu-a","gpu":"0","pid":"77","comm":"train",)"
      R"("user":"bob"},"values":[[1732262400,"150"]]}]}})";
  http::testing::FakeServer prom(std::vector<std::string>{http_json(body)});
  FleetFeedOptions o;
  o.source = prom.url();
  o.interval_s = 60;
  o.round_deadline_s = 5;
  FleetFeed feed(http::prom::Client(http::parse_url(prom.url()), {},
                                    promsource::fleet_limits(5)),
                 o);
  feed.start();
  feed.open("gpu-a");
  std::shared_ptr<const FleetFrame> f;
  for (int i = 0; i < 500; ++i) {
    f = feed.latest();
    if (f->processes.asked) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(f->processes.asked);
  EXPECT_EQ(f->processes.node, "gpu-a");
  ASSERT_EQ(f->processes.rows.size(), 1u) << f->processes.note;
  EXPECT_EQ(f->processes.rows[0].name, "train");
  EXPECT_EQ(f->processes.rows[0].cpu_pct, 150);
  bool asked = false;
  for (const auto& r : prom.requests())
    asked |=
        r.find("gpudoctor_process_gpu_memory_bytes") != std::string::npos &&
        r.find("gpu-a") != std::string::npos;
  EXPECT_TRUE(asked);
  // Closed: the next frame carries none.
  feed.close();
  for (int i = 0; i < 500; ++i) {
    f = feed.latest();
    if (!f->processes.asked) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_FALSE(f->processes.asked);
  feed.stop();
}

}  // namespace
}  // namespace gd::monitor
