// The monitor's pieces without a terminal: the diagnosis over a sliding
// window, the charts' history, a replayed trace and serve's replies.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <random>
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

TEST(WindowDiagnosis, TheStringsComparedAreComparedWhole) {
  Sample a = *at(kT0);
  a.gpus[0].clock_event_reasons = std::vector<std::string>{"sw_power_cap"};
  a.gpus[0].recovery_action = kRecoveryNone;
  a.gpus[1].fabric_state = kFabricCompleted;
  EXPECT_FALSE(WindowDiagnosis::changed_from(a, a));
  Sample b = a;
  b.gpus[0].clock_event_reasons->push_back("hw_slowdown");
  EXPECT_TRUE(WindowDiagnosis::changed_from(a, b));
  // Two reasons are not the one that reads the same joined.
  Sample c = b;
  c.gpus[0].clock_event_reasons =
      std::vector<std::string>{"sw_power_caphw_slowdown"};
  EXPECT_TRUE(WindowDiagnosis::changed_from(b, c));
  Sample d = a;
  d.gpus[0].clock_event_reasons.reset();  // unknown is not "none active"
  Sample e = a;
  e.gpus[0].clock_event_reasons.emplace();
  EXPECT_TRUE(WindowDiagnosis::changed_from(d, e));
  Sample f = a;
  f.gpus[0].recovery_action = kRecoveryGpuReset;
  EXPECT_TRUE(WindowDiagnosis::changed_from(a, f));
  Sample g = a;
  g.gpus[1].fabric_state = kFabricFailed;
  EXPECT_TRUE(WindowDiagnosis::changed_from(a, g));
  // A string's end moving to the next one's start is a change.
  Sample h = a, i = a;
  h.gpus[0].recovery_action = "a1:b";
  i.gpus[0].recovery_action = "a";
  i.gpus[0].fabric_state = "b";
  EXPECT_TRUE(WindowDiagnosis::changed_from(h, i));
  Sample j = a;
  j.gpus[1].read_errors = {"temp_c"};
  EXPECT_TRUE(WindowDiagnosis::changed_from(a, j));
  // A process moving from one GPU's list to the next one's.
  Sample k = a, l = a;
  k.gpus[0].processes->push_back({300, kGiB, "compute"});
  l.gpus[1].processes->insert(l.gpus[1].processes->begin(),
                              {100, kGiB, "compute"});
  l.gpus[0].processes->clear();
  l.gpus[0].processes->push_back({100, kGiB, "compute"});
  k.gpus[1].processes->pop_back();
  EXPECT_TRUE(WindowDiagnosis::changed_from(k, l));
  // Not listed is not listed empty.
  Sample m = a, n = a;
  m.gpus[0].processes.reset();
  n.gpus[0].processes->clear();
  EXPECT_TRUE(WindowDiagnosis::changed_from(m, n));
}

// changed_from() as it compared the samples themselves, before it compared
// their keys: the keys must say the same on any pair.
bool changed_from_samples(const Sample& before, const Sample& now) {
  auto busy = [](const Sample& s) {
    size_t n = 0;
    for (const ProcessSample& p : s.processes)
      n += p.cpu_pct && *p.cpu_pct >= 90;
    return n;
  };
  if (before.gpus.size() != now.gpus.size() ||
      before.processes.size() != now.processes.size() ||
      busy(before) != busy(now))
    return true;
  auto band = [](const opt<double>& util) {
    return !util ? 3 : *util < 10 ? 0 : *util < 90 ? 1 : 2;
  };
  auto gib = [](const opt<uint64_t>& b) {
    return b ? static_cast<int64_t>(*b >> 30) : -1;
  };
  auto five_c = [](const opt<int>& c) { return c ? *c / 5 : -100; };
  for (size_t i = 0; i < now.gpus.size(); ++i) {
    const GpuSample &a = before.gpus[i], &b = now.gpus[i];
    if (a.index != b.index || a.lost != b.lost || a.stale != b.stale ||
        band(a.util_pct) != band(b.util_pct) ||
        gib(a.mem_used_bytes) != gib(b.mem_used_bytes) ||
        five_c(a.temp_c) != five_c(b.temp_c) ||
        a.clock_event_reasons != b.clock_event_reasons ||
        a.ecc_sbe_volatile_total != b.ecc_sbe_volatile_total ||
        a.ecc_dbe_volatile_total != b.ecc_dbe_volatile_total ||
        a.pcie_replay_total != b.pcie_replay_total ||
        a.retired_pages_pending != b.retired_pages_pending ||
        a.remapped_rows_pending != b.remapped_rows_pending ||
        a.recovery_action != b.recovery_action ||
        a.fabric_state != b.fabric_state || a.read_errors != b.read_errors ||
        a.processes.has_value() != b.processes.has_value())
      return true;
    if (!a.processes) continue;
    if (a.processes->size() != b.processes->size()) return true;
    for (size_t j = 0; j < a.processes->size(); ++j)
      if ((*a.processes)[j].pid != (*b.processes)[j].pid) return true;
  }
  return false;
}

// One random edit, small or large, of what changed_from() compares or not.
void mutate_for_change_test(Sample& s, std::mt19937& rng) {
  auto pick = [&rng](size_t n) {
    return static_cast<size_t>(
        std::uniform_int_distribution<size_t>(0, n - 1)(rng));
  };
  GpuSample& g = s.gpus[pick(s.gpus.size())];
  const std::vector<std::string> words = {"", "a", "b", "ab", "sw_power_cap"};
  switch (pick(19)) {
    case 0:
      g.util_pct = static_cast<double>(pick(100));
      break;
    case 1:
      g.util_pct.reset();
      break;
    case 2:
      g.mem_used_bytes = pick(4) * (kGiB / 2);
      break;
    case 3:
      g.temp_c = static_cast<int>(pick(20)) - 5;
      break;
    case 4:
      g.temp_c.reset();
      break;
    case 5:
      g.power_w = static_cast<double>(pick(700));
      break;  // not compared
    case 6:
      g.lost = !g.lost;
      break;
    case 7:
      g.stale = !g.stale;
      break;
    case 8:
      if (pick(3) == 0)
        g.clock_event_reasons.reset();
      else {
        g.clock_event_reasons.emplace();
        for (size_t i = pick(3); i > 0; --i)
          g.clock_event_reasons->push_back(words[pick(words.size())]);
      }
      break;
    case 9:
      g.ecc_sbe_volatile_total = pick(2);
      break;
    case 10:
      g.pcie_replay_total.reset();
      break;
    case 11:
      g.retired_pages_pending = pick(2) == 1;
      break;
    case 12:
      g.recovery_action = words[pick(words.size())];
      break;
    case 13:
      g.fabric_state = words[pick(words.size())];
      break;
    case 14:
      g.read_errors.clear();
      for (size_t i = pick(3); i > 0; --i)
        g.read_errors.push_back(words[pick(words.size())]);
      break;
    case 15:
      if (pick(4) == 0) {
        g.processes.reset();
      } else {
        g.processes.emplace();
        for (size_t i = pick(3); i > 0; --i)
          g.processes->push_back(
              {static_cast<uint32_t>(100 + pick(3)), kGiB, "compute"});
      }
      break;
    case 16:
      s.processes[pick(s.processes.size())].cpu_pct =
          static_cast<double>(85 + pick(10));
      break;
    case 17:
      s.processes.push_back(proc(400, 1, "carol", "sleep 9", 0));
      break;
    default:
      g.index = static_cast<int>(pick(3));
      break;
  }
}

TEST(WindowDiagnosis, TheKeysSayWhatComparingTheSamplesSaid) {
  std::mt19937 rng(20261205);
  size_t changed = 0, same = 0;
  for (int round = 0; round < 4000; ++round) {
    Sample a = *at(kT0);
    for (int i = round % 3; i > 0; --i) mutate_for_change_test(a, rng);
    Sample b = a;
    for (int i = round % 2 + 1; i > 0; --i) mutate_for_change_test(b, rng);
    const bool expected = changed_from_samples(a, b);
    ASSERT_EQ(WindowDiagnosis::changed_from(a, b), expected)
        << "round " << round;
    ASSERT_EQ(WindowDiagnosis::changed_from(b, a), changed_from_samples(b, a))
        << "round " << round;
    (expected ? changed : same) += 1;
  }
  // Both answers were exercised.
  EXPECT_GT(changed, 500u);
  EXPECT_GT(same, 500u);
}

TEST(WindowDiagnosis, KeepsNoReferenceToTheSamplesAdded) {
  WindowDiagnosis d;
  std::weak_ptr<const Sample> first, last;
  {
    auto s = at(kT0, true);
    first = s;
    d.add(std::move(s));
  }
  for (int i = 1; i <= 5; ++i) {
    auto s = at(kT0 + i);
    last = s;
    d.add(s);
  }
  EXPECT_TRUE(first.expired());
  EXPECT_TRUE(last.expired());  // the newest one too, once its caller let go
  EXPECT_EQ(d.samples(), 6u);
  // The findings come from the window's own copies.
  TraceHeader h = header_with(2);
  ASSERT_TRUE(d.evaluate_if_due(h, kT0 + 5));
  d.clear();
  EXPECT_EQ(d.samples(), 0u);
  EXPECT_EQ(d.bytes(), 0u);
  {
    auto s = at(kT0 + 6);
    last = s;
    d.add(std::move(s));
  }
  EXPECT_TRUE(last.expired());
  EXPECT_TRUE(d.evaluate_if_due(h, kT0 + 6));  // first after a clear: at once
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
