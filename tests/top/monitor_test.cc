// The monitor's pieces without a terminal: the diagnosis over a sliding
// window, the charts' history, a replayed trace and serve's replies.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <thread>

#include "monitor/gpu_history.h"
#include "monitor/remote_feed.h"
#include "monitor/remote_json.h"
#include "monitor/replay_feed.h"
#include "monitor/window_diagnosis.h"
#include "top_fixture.h"
#include "trace/trace_io.h"

namespace gd::monitor {
namespace {

using namespace gd::top::test;

std::shared_ptr<const Sample> at(double t, bool xid = false) {
  Sample s = two_jobs();
  s.t = t;
  if (xid) {
    Event e;
    e.kind = "xid";
    e.gpu = 1;
    e.code = 79;
    e.text = "NVRM: Xid (PCI:0000:08:00): 79, GPU has fallen off the bus.";
    s.events.push_back(e);
  }
  return std::make_shared<const Sample>(s);
}

TEST(WindowDiagnosis, RunsTheEngineOverTheLastMinuteEveryFewSeconds) {
  TraceHeader h = header_with(2);
  WindowDiagnosis d;
  d.add(at(kT0, true));
  auto first = d.evaluate_if_due(h, kT0);
  ASSERT_TRUE(first);  // the first evaluation comes at once
  bool xid = false;
  for (const auto& f : first->findings) xid = xid || f.id == "xid-error";
  EXPECT_TRUE(xid);
  EXPECT_GT(first->rules_checked, 20u);
  EXPECT_EQ(first->source, "diagnosis of the last 60 s");
  d.add(at(kT0 + 1));
  EXPECT_FALSE(d.evaluate_if_due(h, kT0 + 1));  // not due yet
  for (int i = 2; i <= 70; ++i) d.add(at(kT0 + i));
  EXPECT_EQ(d.samples(), 61u);  // 60 s of window
  // Kept compressed: far less than the samples themselves.
  EXPECT_GT(d.bytes(), 0u);
  EXPECT_LT(d.bytes(), 61u * 2000);
  auto later = d.evaluate_if_due(h, kT0 + 70);
  ASSERT_TRUE(later);
  for (const auto& f : later->findings) EXPECT_NE(f.id, "xid-error");
}

TEST(WindowDiagnosis, CostlyEvaluationsAreSpacedOutWithinTheCpuBudget) {
  const double every = 5;
  // Cheap (a small node): every 5 s, as configured.
  EXPECT_EQ(WindowDiagnosis::next_interval(every, 0.001), every);
  // 12 ms per evaluation at a budget of 1 ms/s: every 12 s.
  EXPECT_NEAR(WindowDiagnosis::next_interval(every, 0.012),
              0.012 / WindowDiagnosis::kCpuBudget, 1e-9);
  EXPECT_GT(WindowDiagnosis::next_interval(every, 0.012), every);
  // Never further apart than kMaxEveryS, and never closer than configured.
  EXPECT_EQ(WindowDiagnosis::next_interval(every, 10.0),
            WindowDiagnosis::kMaxEveryS);
  EXPECT_EQ(WindowDiagnosis::next_interval(60, 0.001), 60);
}

TEST(WindowDiagnosis, AQuietWindowIsReJudgedAtItsOwnSmallerBudget) {
  const double every = 5;
  // 12 ms: every 12 s after a change, every 60 s while nothing changes.
  EXPECT_NEAR(WindowDiagnosis::next_interval(every, 0.012), 12, 1e-9);
  EXPECT_EQ(WindowDiagnosis::next_interval(every, 0.012,
                                           WindowDiagnosis::kQuietCpuBudget,
                                           WindowDiagnosis::kQuietMaxEveryS),
            60);
  // A small node's evaluation (1 ms) stays every 5 s, quiet or not.
  EXPECT_EQ(WindowDiagnosis::next_interval(every, 0.001,
                                           WindowDiagnosis::kQuietCpuBudget),
            every);
}

TEST(WindowDiagnosis, ChangesThatMakeTheFindingsWorthReJudging) {
  Sample a = *at(kT0);
  a.gpus[0].util_pct = 50;
  Sample b = a;
  b.t = kT0 + 1;
  b.gpus[0].util_pct = 62;
  for (auto& p : b.processes) p.cpu_pct = p.cpu_pct.value_or(0) + 3;
  EXPECT_FALSE(WindowDiagnosis::changed_from(a, b));  // numbers move
  b.gpus[0].util_pct = 95;                            // saturated now
  EXPECT_TRUE(WindowDiagnosis::changed_from(a, b));
  Sample c = a;
  c.gpus[1].stale = true;
  EXPECT_TRUE(WindowDiagnosis::changed_from(a, c));
  Sample d = a;
  ASSERT_TRUE(d.gpus[0].processes);
  d.gpus[0].processes->push_back(GpuProcess{});
  EXPECT_TRUE(WindowDiagnosis::changed_from(a, d));
  Sample e = a;
  ASSERT_GE(e.processes.size(), 4u);
  e.processes[3].cpu_pct = 100;  // a process saturated
  EXPECT_TRUE(WindowDiagnosis::changed_from(a, e));
}

TEST(WindowDiagnosis, TimeGoingBackClearsTheWindow) {
  WindowDiagnosis d;
  d.add(at(kT0 + 10));
  d.add(at(kT0 + 11));
  d.add(at(kT0));
  EXPECT_EQ(d.samples(), 1u);
}

TEST(GpuHistory, KeepsTheNewestPointsPerGpuWithNanForUnknown) {
  TraceHeader h = header_with(2);
  GpuHistory hist(h);
  Sample s = two_jobs();
  for (size_t i = 0; i < GpuHistory::kCapacity + 5; ++i) {
    s.gpus[0].util_pct = static_cast<double>(i % 100);
    hist.add(h, s);
  }
  EXPECT_EQ(hist.size(), GpuHistory::kCapacity);
  const auto& util =
      hist.series()[0].points[static_cast<size_t>(Metric::kUtil)];
  EXPECT_FLOAT_EQ(util.back(),
                  static_cast<float>((GpuHistory::kCapacity + 4) % 100));
  s.gpus[1].stale = true;
  hist.add(h, s);
  EXPECT_TRUE(std::isnan(
      hist.series()[1].points[static_cast<size_t>(Metric::kUtil)].back()));
  const auto& mem =
      hist.series()[0].points[static_cast<size_t>(Metric::kMemUsed)];
  EXPECT_NEAR(mem.back(), 100.0 * 21 / 80, 1e-3);
}

class TempTrace {
 public:
  explicit TempTrace(int samples) {
    path_ = std::filesystem::temp_directory_path() /
            ("top_replay_" + std::to_string(::getpid()) + ".jsonl");
    TraceWriter w(path_.string());
    w.write_header(header_with(2));
    for (int i = 0; i < samples; ++i) w.write_sample(*at(kT0 + i, i == 3));
    w.close();
  }
  ~TempTrace() { std::filesystem::remove(path_); }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

// Waits until the feed publishes a frame that `ok` accepts.
template <typename F>
std::shared_ptr<const Frame> wait_for(Feed& feed, F ok) {
  for (int i = 0; i < 500; ++i) {
    auto f = feed.latest();
    if (f && ok(*f)) return f;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return nullptr;
}

TEST(ReplayFeed, ShowsTheFirstSampleAtOnceThenSeeksAndPauses) {
  TempTrace trace(120);
  ReplayFeed feed(trace.path(), 64);
  auto first = feed.latest();
  ASSERT_TRUE(first && first->sample);
  EXPECT_EQ(first->kind, SourceKind::kReplay);
  EXPECT_DOUBLE_EQ(first->sample->t, kT0);
  EXPECT_DOUBLE_EQ(first->replay->speed, 64);
  feed.control(ReplayCommand::kTogglePause);
  feed.start();
  auto paused = wait_for(feed, [](const Frame& f) { return f.replay->paused; });
  ASSERT_TRUE(paused);
  const double t = paused->sample->t;
  for (int i = 0; i < 3; ++i) feed.control(ReplayCommand::kSeekForward);
  auto ahead = wait_for(feed, [&](const Frame& f) {
    return f.sample->t >= t + 3 * Feed::kSeekStepS;
  });
  ASSERT_TRUE(ahead);
  EXPECT_TRUE(ahead->replay->paused);
  feed.control(ReplayCommand::kSeekBack);
  auto back = wait_for(feed, [&](const Frame& f) {
    return f.sample->t <= ahead->sample->t - Feed::kSeekStepS;
  });
  ASSERT_TRUE(back);
  // After a seek back the trace is read again from its start, and the
  // findings are those of the minute before the position: the Xid at +3 s.
  ASSERT_TRUE(back->findings);
  bool xid = false;
  for (const auto& f : back->findings->findings) xid |= f.id == "xid-error";
  EXPECT_TRUE(xid);
  feed.control(ReplayCommand::kTogglePause);
  auto end = wait_for(feed, [](const Frame& f) { return f.replay->ended; });
  ASSERT_TRUE(end);
  EXPECT_DOUBLE_EQ(end->sample->t, kT0 + 119);
  feed.stop();
}

TEST(ReplayFeed, UnreadableTraceThrowsNamingIt) {
  EXPECT_THROW(ReplayFeed("/nonexistent/trace.jsonl"), TraceError);
}

TEST(RemoteJson, ParsesServesStatusAndFindings) {
  std::string status = "{\"header\":" + header_to_json(header_with(2)) +
                       ",\"sample\":" + sample_to_json(two_jobs()) +
                       ",\"collect\":{\"interval_s\":2,\"version\":\"0.1.0\"}}";
  RemoteStatus st = parse_remote_status(status);
  EXPECT_EQ(st.header.gpus.size(), 2u);
  ASSERT_TRUE(st.sample);
  EXPECT_EQ(st.sample->processes.size(), 5u);
  EXPECT_DOUBLE_EQ(st.interval_s, 2);
  EXPECT_FALSE(st.remote_kill);

  FindingsState fs = parse_remote_findings(
      R"({"findings":[{"id":"xid-error","severity":"critical","gpus":[1],)"
      R"("pids":[7],"title":"t","evidence":"e","action":"a","start":1,"end":2,)"
      R"("alert":{"state":"firing"}}],"window":{"start":1,"end":2,"samples":60},)"
      R"("evaluated_at":3})");
  ASSERT_EQ(fs.findings.size(), 1u);
  EXPECT_EQ(fs.findings[0].id, "xid-error");
  EXPECT_EQ(fs.findings[0].gpus, std::vector<int>{1});
  EXPECT_EQ(fs.window.samples, 60u);
  EXPECT_EQ(fs.source, "serve's alerts");
}

TEST(RemoteJson, RejectsWhatIsNotServesReply) {
  EXPECT_THROW(parse_remote_status("<html>"), std::runtime_error);
  EXPECT_THROW(parse_remote_status("{}"), std::runtime_error);
  EXPECT_THROW(parse_remote_status(R"({"header":{"version":1}})"),
               std::runtime_error);
  EXPECT_THROW(parse_remote_findings(R"({"findings":[{"severity":"bad"}]})"),
               std::runtime_error);
  EXPECT_THROW(parse_remote_findings(R"({"findings":3})"), std::runtime_error);
}

TEST(RemoteUrl, HttpAndHttpsWithAnOptionalPrefixOnly) {
  auto u = parse_remote_url("http://127.0.0.1:9856/");
  EXPECT_EQ(u.scheme_host_port, "http://127.0.0.1:9856");
  EXPECT_EQ(u.path, "");
  u = parse_remote_url("https://gpu07.example:443/gd");
  EXPECT_EQ(u.path, "/gd");
  EXPECT_THROW(parse_remote_url("ftp://x"), std::invalid_argument);
  EXPECT_THROW(parse_remote_url("http://user:pw@x"), std::invalid_argument);
  EXPECT_THROW(parse_remote_url("http://x/?a=1"), std::invalid_argument);
  EXPECT_THROW(parse_remote_url("http://x/?"), std::invalid_argument);
  EXPECT_THROW(parse_remote_url("http:///path"), std::invalid_argument);
}

TEST(RemoteFeed, UnreachableServeIsAProblemOnTheScreenNotAHang) {
  RemoteOptions o;
  o.url = "http://127.0.0.1:9";  // discard port: nothing listens
  o.request_timeout_s = 0.3;
  RemoteFeed feed(o);
  feed.start();
  auto f = wait_for(feed, [](const Frame& f) {
    return f.problem.find("cannot reach") != std::string::npos;
  });
  feed.stop();
  ASSERT_TRUE(f);
  EXPECT_FALSE(f->sample);
}

}  // namespace
}  // namespace gd::monitor
