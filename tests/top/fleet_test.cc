// The fleet screen of `top --prometheus` without a terminal: the rows
// (worst first, stale and gone nodes, the filter), the layout (exact size,
// nothing unsafe from the server), the keys, and the feed's merge of a
// round with the nodes it no longer lists.
#include "views/top/fleet.h"

#include <gtest/gtest.h>

#include "monitor/fleet_feed.h"
#include "top/fleet_fixture.h"
#include "views/top/parts.h"

namespace gd::top {
namespace {

using fleet_test::fleet_frame_of;
using fleet_test::fleet_node;
using fleet_test::kNow;

std::vector<std::string> fleet_names(const std::vector<FleetRow>& rows) {
  std::vector<std::string> out;
  for (const auto& r : rows) out.push_back(r.node->data.node);
  return out;
}

TEST(FleetRows, WorstFirstThenByName) {
  auto refused = fleet_node("gpu-refused", 1);
  refused.error = "a series names GPU 64 of the node";
  refused.sample.gpus.clear();
  auto f = fleet_frame_of({fleet_node("gpu-b", 2), fleet_node("gpu-a", 3),
                           fleet_node("gpu-ecc", 2, 3),
                           fleet_node("gpu-old", 150), refused});
  auto rows = fleet_rows(f, "", kNow);
  EXPECT_EQ(fleet_names(rows),
            (std::vector<std::string>{"gpu-ecc", "gpu-refused", "gpu-old",
                                      "gpu-a", "gpu-b"}));
  EXPECT_EQ(rows[0].worst_id, "ecc-uncorrectable");
  EXPECT_EQ(rows[0].worst_severity, "critical");
  EXPECT_EQ(rows[0].findings, 1u);
  EXPECT_EQ(rows[1].status, NodeStatus::kRefused);
  EXPECT_EQ(rows[2].status, NodeStatus::kStale);
  EXPECT_EQ(rows[2].age_s, 150);
  EXPECT_EQ(rows[3].status, NodeStatus::kOk);
}

TEST(FleetRows, ANodeNoLongerListedKeepsItsLastValuesAsGone) {
  auto first =
      fleet_frame_of({fleet_node("gpu-a", 1), fleet_node("gpu-gone", 1, 1)});
  auto second = fleet_frame_of({fleet_node("gpu-a", 1)}, first.nodes);
  ASSERT_EQ(second.nodes.size(), 2u);
  auto rows = fleet_rows(second, "", kNow + 400);
  // Its critical finding still ranks it first; it is marked gone.
  EXPECT_EQ(fleet_names(rows), (std::vector<std::string>{"gpu-gone", "gpu-a"}));
  EXPECT_EQ(rows[0].status, NodeStatus::kGone);
  EXPECT_EQ(rows[0].worst_id, "ecc-uncorrectable");
  EXPECT_FALSE(rows[0].node->listed);
}

TEST(FleetRows, ARowRemapFailureIsMemoryDegrading) {
  auto n = fleet_node("gpu-remap", 1);
  n.sample.gpus[0].remapped_rows_failure = true;
  auto f = fleet_frame_of({n});
  auto rows = fleet_rows(f, "", kNow);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].worst_severity, "critical");
  std::vector<std::string> ids;
  for (const auto& c : rows[0].node->judged.findings)
    ids.push_back(c.finding.id);
  // check's rules: the failed remap is memory degrading, and the memory it
  // could not retire is uncorrectable ECC.
  EXPECT_EQ(
      ids, (std::vector<std::string>{"ecc-uncorrectable", "memory-degrading"}));
}

TEST(FleetRows, APendingRemapNeedsAReset) {
  auto n = fleet_node("gpu-pending", 1);
  n.sample.gpus[1].remapped_rows_pending = true;
  auto f = fleet_frame_of({n});
  auto rows = fleet_rows(f, "", kNow);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].worst_id, "ecc-reset-required");
  EXPECT_EQ(rows[0].worst_severity, "critical");
}

TEST(FleetRows, FilterByNameOrFindingId) {
  auto f = fleet_frame_of({fleet_node("gpu-a", 1), fleet_node("gpu-b", 1, 2),
                           fleet_node("cpu-x", 1)});
  EXPECT_EQ(fleet_names(fleet_rows(f, "GPU-", kNow)),
            (std::vector<std::string>{"gpu-b", "gpu-a"}));
  EXPECT_EQ(fleet_names(fleet_rows(f, "ecc", kNow)),
            (std::vector<std::string>{"gpu-b"}));
  EXPECT_TRUE(fleet_rows(f, "nothing", kNow).empty());
}

struct Drawn {
  explicit Drawn(monitor::FleetFrame f) : frame(std::move(f)) {}
  monitor::FleetFrame frame;
  FleetViewState state;
  std::vector<FleetRow> rows;
  Screen screen;
  std::string draw(int w, int h, double now = kNow) {
    rows = fleet_rows(frame, state.filter, now);
    settle_fleet_selection(state, rows, fleet_table_rows(h));
    FleetLayoutInput in;
    in.frame = &frame;
    in.rows = &rows;
    in.state = &state;
    in.now = now;
    screen = fleet_layout(in, w, h);
    for (const auto& l : screen.lines) {
      int cols = 0;
      for (const auto& sp : l.spans) {
        cols += columns_of(sp.text);
        for (unsigned char c : sp.text)
          EXPECT_FALSE(c < 0x20 || c == 0x7f) << sp.text;
      }
      EXPECT_EQ(cols, w);
    }
    EXPECT_EQ(static_cast<int>(screen.lines.size()), h);
    return screen.text();
  }
};

TEST(FleetLayout, ListAtEveryWidthExactAndSafe) {
  auto hostile = fleet_node("gpu-h", 1);
  hostile.error = "\x1b]0;pwned\x07 refused \xe2\x80\xae";
  Drawn d(fleet_frame_of({fleet_node("gpu-a", 2), fleet_node("gpu-old", 130),
                          fleet_node("gpu-e", 1, 2), hostile}));
  d.frame.error = "";
  for (auto [w, h] : {std::pair{80, 24}, {200, 50}, {40, 10}}) {
    std::string t = d.draw(w, h);
    EXPECT_EQ(t.find('\x1b'), std::string::npos);
  }
  std::string t = d.draw(140, 30);
  EXPECT_NE(t.find("gpudoctor top — fleet http://prometheus:9090"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("4 nodes"), std::string::npos) << t;
  EXPECT_NE(t.find("CRIT ecc-uncorrectable"), std::string::npos) << t;
  EXPECT_NE(t.find("stale 2m"), std::string::npos) << t;
  EXPECT_NE(t.find("refused"), std::string::npos) << t;
  // The worst is the first row under the heading, and selected.
  EXPECT_EQ(d.screen.lines[3].spans[0].text.substr(0, 5), "gpu-e");
  EXPECT_EQ(d.state.selected, "gpu-e");
}

TEST(FleetLayout, ARoundThatFailedIsSaidAndTheNodesStay) {
  Drawn d(fleet_frame_of({fleet_node("gpu-a", 2)}));
  d.frame.error = "http://p:9090/api/v1/query_range: connection refused";
  std::string t = d.draw(120, 20);
  EXPECT_NE(t.find("cannot read the fleet: http://p:9090"), std::string::npos)
      << t;
  EXPECT_NE(t.find("gpu-a"), std::string::npos);
}

TEST(FleetLayout, AnOpenNodeShowsItsGpusFindingsAndWhatWasNotJudged) {
  Drawn d(fleet_frame_of({fleet_node("gpu-a", 2), fleet_node("gpu-e", 1, 2)}));
  d.state.open = "gpu-e";
  std::string t = d.draw(160, 40);
  EXPECT_NE(t.find("node gpu-e"), std::string::npos) << t;
  EXPECT_NE(t.find("UTIL["), std::string::npos) << t;
  EXPECT_NE(t.find("CRIT ecc-uncorrectable"), std::string::npos) << t;
  EXPECT_NE(t.find("volatile uncorrectable ECC: 2"), std::string::npos) << t;
  EXPECT_NE(t.find("not judged"), std::string::npos) << t;
  // Stale: greyed, with its age.
  d.state.open = "gpu-a";
  t = d.draw(160, 40, kNow + 120);
  EXPECT_NE(t.find("stale 2m: its newest sample is 2m old"), std::string::npos)
      << t;
}

TEST(FleetRows, NodesThatStoppedBeforeTopStartedAreGoneWithTheirAge) {
  auto f = fleet_frame_of({fleet_node("gpu-a", 1)});
  f.nodes = monitor::add_recent(
      f.nodes, {{"gpu-a", kNow - 1}, {"gpu-lost", kNow - 1200}});
  auto rows = fleet_rows(f, "", kNow);
  ASSERT_EQ(fleet_names(rows), (std::vector<std::string>{"gpu-lost", "gpu-a"}));
  EXPECT_EQ(rows[0].status, NodeStatus::kGone);
  EXPECT_EQ(rows[0].age_s, 1200);
  EXPECT_TRUE(rows[0].node->data.sample.gpus.empty());
  Drawn d(f);
  std::string t = d.draw(120, 20);
  EXPECT_NE(t.find("gone 20m"), std::string::npos) << t;
  // Still gone after the next round, which does not list it either.
  auto next = fleet_frame_of({fleet_node("gpu-a", 1)}, f.nodes);
  EXPECT_EQ(next.nodes.size(), 2u);
}

// A node held down by heat, as test_prometheus_source's hot GPUs: busy,
// its SM clock low, the software thermal slowdown active.
promsource::FleetNode hot_node(double last_seen) {
  auto n = fleet_node("gpu-hot", kNow - last_seen);
  n.last_seen = last_seen;
  for (auto& g : n.sample.gpus) {
    g.util_pct = 98;
    g.temp_c = 89;
    g.sm_clock_mhz = 1200;
    g.clock_event_reasons = std::vector<std::string>{"sw_thermal_slowdown"};
  }
  return n;
}

TEST(FleetWindows, ThrottlingJudgedOverTheScrapesOfSeveralRounds) {
  monitor::FleetWindows windows;
  std::vector<monitor::FleetNodeState> prev;
  auto has = [](const monitor::FleetNodeState& n, const std::string& id) {
    for (const auto& c : n.judged.findings)
      if (c.finding.id == id) return true;
    return false;
  };
  // Scrapes 15 s apart; each found by two rounds (the second adds nothing).
  for (int i = 0; i < 4; ++i) {
    for (int again = 0; again < 2; ++again) {
      promsource::FleetState st;
      st.t = kNow + 15 * i + again;
      st.nodes = {hot_node(kNow + 15 * i), fleet_node("gpu-cool", -15.0 * i)};
      prev = monitor::merge_round(prev, std::move(st));
      windows.judge(prev);
    }
    ASSERT_EQ(prev.size(), 2u);
    ASSERT_EQ(prev[1].data.node, "gpu-hot");
    EXPECT_EQ(windows.samples(), 2u * static_cast<size_t>(i + 1));
    // Three scrapes at least before a rule calls it throttling.
    EXPECT_EQ(has(prev[1], "thermal-throttling"), i >= 2) << i;
    EXPECT_FALSE(has(prev[0], "thermal-throttling"));
  }
  // A node no round lists any more is forgotten.
  promsource::FleetState st;
  st.t = kNow + 100;
  st.nodes = {fleet_node("gpu-cool", 1)};
  prev = monitor::merge_round(prev, std::move(st));
  windows.judge(prev);
  EXPECT_EQ(windows.samples(), 4u);
}

// The window is the last 10 minutes of scrapes: a minute of heat 7.5
// minutes ago is still found (a window of a few scrapes lost it long
// before), and gone once it is more than 10 minutes old.
TEST(FleetWindows, TheLastTenMinutesOfScrapesAreJudged) {
  monitor::FleetWindows windows;
  std::vector<monitor::FleetNodeState> prev;
  auto throttled = [](const monitor::FleetNodeState& n) {
    for (const auto& c : n.judged.findings)
      if (c.finding.id == "thermal-throttling") return true;
    return false;
  };
  auto scrape = [&](int i, bool hot) {
    const double t = kNow + 15.0 * i;
    auto n = hot_node(t);
    if (!hot)
      for (auto& g : n.sample.gpus) {
        g.util_pct = 0;  // idle: no busy sample to judge
        g.temp_c = 40;
        g.sm_clock_mhz = 1980;
        g.clock_event_reasons = std::vector<std::string>{"gpu_idle"};
      }
    promsource::FleetState st;
    st.t = t + 1;
    st.nodes = {std::move(n)};
    prev = monitor::merge_round(prev, std::move(st));
    windows.judge(prev);
    return prev.at(0);
  };
  for (int i = 0; i < 4; ++i) scrape(i, true);
  monitor::FleetNodeState n;
  for (int i = 4; i < 34; ++i) n = scrape(i, false);
  EXPECT_TRUE(throttled(n)) << "7.5 minutes after, still in the window";
  EXPECT_EQ(n.window_samples, 34u);
  EXPECT_DOUBLE_EQ(n.window_span_s, 33 * 15.0);
  // 41 scrapes span 10 minutes: the 42nd pushes out the first.
  for (int i = 34; i < 42; ++i) n = scrape(i, false);
  EXPECT_EQ(windows.samples(), 41u);
  EXPECT_EQ(n.window_samples, 41u);
  EXPECT_DOUBLE_EQ(n.window_span_s, 600.0);
  // Two hot scrapes left in the window: fewer than the rule needs, so it
  // says it saw some but not enough.
  n = scrape(42, false);
  n = scrape(43, false);
  EXPECT_FALSE(throttled(n));
  EXPECT_LT(windows.bytes(), 41u * 1024) << "compressed scrapes";
}

// A node scraped every second, in a fleet refreshed every second: a scrape
// every 5 s is kept, so 120 of them still span 10 minutes.
TEST(FleetWindows, AScrapeEveryFiveSecondsAtMost) {
  monitor::FleetWindows windows;
  std::vector<monitor::FleetNodeState> nodes;
  for (int i = 0; i <= 30; ++i) {
    promsource::FleetState st;
    st.t = kNow + i + 0.5;
    st.nodes = {hot_node(kNow + i)};
    nodes = monitor::merge_round(nodes, std::move(st));
    windows.judge(nodes);
  }
  EXPECT_EQ(windows.samples(), 7u);  // 0, 5, ..., 30 s
  EXPECT_EQ(nodes.at(0).window_samples, 7u);
  EXPECT_DOUBLE_EQ(nodes.at(0).window_span_s, 30.0);
}

// Filled from the fleet's last minutes when the view starts: judged whole at
// the next round, though that round finds no newer scrape.
TEST(FleetWindows, FilledFromTheLastMinutesJudgedAtTheNextRound) {
  monitor::FleetWindows windows;
  promsource::NodeHistory h;
  h.node = "gpu-hot";
  for (int i = 0; i < 6; ++i) {
    auto n = hot_node(kNow - 15.0 * (5 - i));
    h.header = n.header;
    n.sample.t = n.last_seen;
    h.samples.push_back(n.sample);
  }
  // In two slices whose seam repeats a scrape.
  promsource::NodeHistory older = h;
  older.samples.resize(3);
  h.samples.erase(h.samples.begin(), h.samples.begin() + 2);
  windows.begin_fill();
  std::vector<promsource::NodeHistory> slice;
  slice.push_back(std::move(older));
  windows.fill(std::move(slice));
  slice.clear();
  slice.push_back(std::move(h));
  windows.fill(std::move(slice));
  EXPECT_EQ(windows.samples(), 6u);
  promsource::FleetState st;
  st.t = kNow + 1;
  st.nodes = {hot_node(kNow)};  // the newest scrape, already held
  auto nodes = monitor::merge_round({}, std::move(st));
  windows.judge(nodes);
  EXPECT_EQ(windows.samples(), 6u);
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].window_samples, 6u);
  EXPECT_DOUBLE_EQ(nodes[0].window_span_s, 75.0);
  bool throttled = false;
  for (const auto& c : nodes[0].judged.findings)
    throttled |= c.finding.id == "thermal-throttling";
  EXPECT_TRUE(throttled);
}

Key fleet_char(char32_t c) {
  Key k;
  k.kind = Key::Kind::kChar;
  k.ch = c;
  return k;
}
Key fleet_kind(Key::Kind k) {
  Key key;
  key.kind = k;
  return key;
}

TEST(FleetKeys, FilterOpenBackQuit) {
  Drawn d(fleet_frame_of({fleet_node("gpu-a", 2), fleet_node("gpu-b", 2),
                          fleet_node("gpu-e", 1, 2)}));
  d.draw(120, 30);
  FleetViewState& st = d.state;
  EXPECT_EQ(fleet_key(st, fleet_char('/'), d.rows, 10), FleetAction::kNone);
  for (char32_t c : std::u32string(U"-b"))
    fleet_key(st, fleet_char(c), d.rows, 10);
  // q while typing is text, not quit.
  fleet_key(st, fleet_char('q'), d.rows, 10);
  fleet_key(st, fleet_kind(Key::Kind::kBackspace), d.rows, 10);
  fleet_key(st, fleet_kind(Key::Kind::kEnter), d.rows, 10);
  EXPECT_EQ(st.filter, "-b");
  d.draw(120, 30);
  EXPECT_EQ(fleet_names(d.rows), std::vector<std::string>{"gpu-b"});
  fleet_key(st, fleet_kind(Key::Kind::kEscape), d.rows, 10);
  EXPECT_EQ(st.filter, "");
  d.draw(120, 30);
  fleet_key(st, fleet_kind(Key::Kind::kHome), d.rows, 10);
  fleet_key(st, fleet_kind(Key::Kind::kDown), d.rows, 10);
  EXPECT_EQ(st.selected, "gpu-a");
  fleet_key(st, fleet_kind(Key::Kind::kEnter), d.rows, 10);
  EXPECT_EQ(st.open, "gpu-a");
  EXPECT_EQ(fleet_key(st, fleet_char('q'), d.rows, 10), FleetAction::kNone);
  EXPECT_FALSE(st.open);
  EXPECT_EQ(fleet_key(st, fleet_char('r'), d.rows, 10), FleetAction::kRefresh);
  EXPECT_EQ(fleet_key(st, fleet_char('q'), d.rows, 10), FleetAction::kQuit);
  EXPECT_EQ(fleet_key(st, fleet_kind(Key::Kind::kInterrupt), d.rows, 10),
            FleetAction::kQuit);
}

}  // namespace
}  // namespace gd::top
