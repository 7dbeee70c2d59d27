#include "views/top/layout.h"

#include <gtest/gtest.h>

#include "top_fixture.h"
#include "views/top/parts.h"

namespace gd::top {
namespace {

using namespace test;

struct Shown {
  std::shared_ptr<monitor::Frame> frame;
  TopState state;
  std::vector<ProcRow> rows;
  std::map<int, std::pair<GpuSample, double>> last_good;
  Screen screen;

  Shown(TraceHeader h, Sample s)
      : frame(frame_of(std::move(h), std::move(s))) {}

  const std::string& draw(int w, int hgt) {
    rows = build_rows(*frame->sample, state);
    LayoutInput in;
    in.frame = frame.get();
    in.rows = &rows;
    in.state = &state;
    in.last_good = &last_good;
    in.now = kT0;
    screen = layout(in, w, hgt);
    text_ = screen.text();
    return text_;
  }
  std::string text_;
};

bool has_control_byte(const Screen& s) {
  for (const auto& l : s.lines)
    for (const auto& sp : l.spans)
      for (unsigned char c : sp.text)
        if (c < 0x20 || c == 0x7f) return true;
  return false;
}

void expect_exact_size(const Screen& s, int w, int h) {
  ASSERT_EQ(static_cast<int>(s.lines.size()), h);
  for (const auto& l : s.lines) {
    int cols = 0;
    for (const auto& sp : l.spans) cols += columns_of(sp.text);
    EXPECT_EQ(cols, w);
  }
}

TEST(TopLayout, EightyByTwentyFourShowsGpusHostAndProcesses) {
  Shown v(header_with(2), two_jobs());
  const std::string& t = v.draw(80, 24);
  expect_exact_size(v.screen, 80, 24);
  EXPECT_NE(t.find("gpudoctor top — node07"), std::string::npos) << t;
  EXPECT_NE(t.find("driver 535.129.03"), std::string::npos);
  EXPECT_NE(t.find("A100-SXM4-80GB"), std::string::npos);
  EXPECT_NE(t.find("88%"), std::string::npos) << t;
  EXPECT_NE(t.find("60°C/89"), std::string::npos) << t;
  EXPECT_NE(t.find("no findings — diagnosis of the last 60 s"),
            std::string::npos);
  EXPECT_NE(t.find("python train.py"), std::string::npos);
  EXPECT_NE(t.find("+2 python train.py"), std::string::npos) << t;
  EXPECT_NE(t.find("no such process"), std::string::npos);
  EXPECT_NE(t.find("CPU["), std::string::npos);
  EXPECT_NE(t.find("h help"), std::string::npos);
  EXPECT_NE(t.find("k kill"), std::string::npos);
  // No charts at this size.
  EXPECT_EQ(t.find("charts:"), std::string::npos);
}

TEST(TopLayout, TwoHundredBySixtyAddsChartsAndColumns) {
  Shown v(header_with(2), two_jobs());
  const std::string& t = v.draw(200, 60);
  expect_exact_size(v.screen, 200, 60);
  EXPECT_NE(t.find("charts: util / memory"), std::string::npos) << t;
  EXPECT_NE(t.find("CONTAINER"), std::string::npos);
  EXPECT_NE(t.find("SM%"), std::string::npos);
  EXPECT_NE(t.find("07:00.0"), std::string::npos);  // bus id when wide
}

TEST(TopLayout, SmPercentShowsPerProcessUtilisationOrNa) {
  Sample s = two_jobs();
  (*s.gpus[1].processes)[0].sm_util_pct = 73.4;  // pid 200
  Shown v(header_with(2), s);
  v.state.tree = true;
  v.draw(200, 60);
  auto line_of = [&](const std::string& needle) {
    for (const auto& l : v.screen.lines) {
      std::string t;
      for (const auto& sp : l.spans) t += sp.text;
      if (t.find(needle) != std::string::npos) return t;
    }
    return std::string();
  };
  const std::string bob = line_of("python finetune.py");
  EXPECT_NE(bob.find(" 73 "), std::string::npos) << bob;
  // The trainer's GPU gives no per-process sample: n/a, and its workers'
  // rows leave the cell blank (they have no GPU context of their own).
  const std::string trainer = line_of("alice");
  EXPECT_NE(trainer.find("n/a"), std::string::npos) << trainer;
}

TEST(TopLayout, DatacenterGpusShowGpmNvlinksAndMigInstances) {
  Sample s = two_jobs();
  GpuSample& h100 = s.gpus[0];
  h100.gpm.sm_active_pct = 21;
  h100.gpm.tensor_active_pct = 7;
  h100.nvlinks.emplace();
  for (int l = 0; l < 18; ++l)
    h100.nvlinks->push_back({.link = l, .active = l != 5, .version = 4});
  (*h100.nvlinks)[2].crc_errors_total = 12;
  GpuSample& a100 = s.gpus[1];
  a100.mig_instances.emplace();
  MigInstance big{.gi_id = 1, .ci_id = 0, .profile = "3g.40gb"};
  big.mem_total_bytes = 40 * kGiB;
  big.mem_used_bytes = 12 * kGiB;
  big.gpm.sm_active_pct = 45;
  a100.mig_instances->push_back(big);
  a100.mig_instances->push_back({.gi_id = 2, .ci_id = 0, .profile = "2g.20gb"});
  Shown v(header_with(2), s);
  const std::string& t = v.draw(200, 60);
  EXPECT_NE(t.find("SM active 21% tensor 7%"), std::string::npos) << t;
  EXPECT_NE(t.find("NVLink 17/18 up, 12 errors"), std::string::npos) << t;
  EXPECT_NE(t.find("MIG  GI1 3g.40gb 12.0/40G SM 45%  GI2 2g.20gb"),
            std::string::npos)
      << t;
  // A link down among working ones is drawn as a fault.
  bool crit = false;
  for (const auto& l : v.screen.lines)
    for (const auto& sp : l.spans)
      if (sp.style == Style::kCrit &&
          sp.text.find("NVLink") != std::string::npos)
        crit = true;
  EXPECT_TRUE(crit);
  expect_exact_size(v.screen, 200, 60);
}

TEST(TopLayout, OrphanedMemoryHasItsOwnMarkOnTheBar) {
  Shown v(header_with(2), two_jobs());
  v.draw(120, 30);
  bool found = false;
  for (const auto& l : v.screen.lines)
    for (const auto& sp : l.spans)
      if (sp.style == Style::kBarOrphan &&
          sp.text.find('#') != std::string::npos)
        found = true;
  EXPECT_TRUE(found) << v.text_;
}

TEST(TopLayout, FindingsStripMostSevereFirstWithIdAndTitle) {
  Shown v(header_with(2), two_jobs());
  auto fs = std::make_shared<monitor::FindingsState>();
  fs->source = "diagnosis of the last 60 s";
  fs->findings.push_back({"xid-error",
                          "critical",
                          {1},
                          {},
                          "GPU 1 hit Xid 79",
                          "e",
                          "a",
                          kT0,
                          kT0});
  fs->findings.push_back({"input-bound",
                          "warning",
                          {0},
                          {100},
                          "GPU 0 is held back by its data loader",
                          "e",
                          "a",
                          kT0,
                          kT0});
  v.frame->findings = fs;
  const std::string& t = v.draw(100, 30);
  auto crit = t.find("CRIT xid-error");
  auto warn = t.find("WARN input-bound");
  ASSERT_NE(crit, std::string::npos) << t;
  ASSERT_NE(warn, std::string::npos) << t;
  EXPECT_LT(crit, warn);
}

TEST(TopLayout, NoFindingsWithUnjudgedRulesIsNotAllIsWell) {
  Shown v(header_with(2), two_jobs());
  auto fs = std::make_shared<monitor::FindingsState>();
  fs->source = "serve's alerts";
  fs->rules_checked = 33;
  fs->not_judged = {{"xid-error", "needs the kernel log's Xid lines"},
                    {"memory-leak", "needs 5 min"}};
  v.frame->findings = fs;
  const std::string& t = v.draw(120, 30);
  EXPECT_NE(t.find("no findings — serve's alerts; not judged (2): xid-error, "
                   "memory-leak"),
            std::string::npos)
      << t;
  EXPECT_EQ(t.find("✓"), std::string::npos) << t;
}

TEST(TopLayout, HostileProcessNamesNeverReachTheScreenRaw) {
  Sample s = two_jobs();
  s.processes[0].cmdline =
      "evil\x1b]0;pwned\x07\nrm -rf /\r\xff\xfe \xe2\x80\xae";
  s.processes[0].user = "\x1b[31mroot";
  Shown v(header_with(2), s);
  v.state.tree = true;
  v.draw(200, 60);
  EXPECT_FALSE(has_control_byte(v.screen));
  EXPECT_NE(v.text_.find("evil\\e]0;pwned\\x07\\nrm"), std::string::npos)
      << v.text_;
  EXPECT_NE(v.text_.find("\\u202e"), std::string::npos);
  // Details too.
  v.state.overlay = Overlay::kDetails;
  v.state.details_of = RowKey{0, 100};
  v.draw(80, 24);
  EXPECT_FALSE(has_control_byte(v.screen));
  EXPECT_NE(v.text_.find("\\e[31mroot"), std::string::npos) << v.text_;
}

TEST(TopLayout, HostStripNamesTheBusiestOtherWork) {
  Sample s = two_jobs();
  s.host.cpu_util_pct = 99;
  s.host.other_cpu_top = std::vector<OtherCpuProcess>{
      {5120, "yes\x1b[2J", "bob", std::nullopt, 99.7},
      {5121, "stress", "bob", std::nullopt, 98.1},
      {5122, "gzip", "bob", std::nullopt, 40}};
  Shown v(header_with(2), s);
  const std::string& t = v.draw(200, 60);
  EXPECT_NE(t.find("other yes\\e[2J 5120 100% +2"), std::string::npos) << t;
  EXPECT_FALSE(has_control_byte(v.screen));
  // Nothing busy outside the jobs: nothing said.
  s.host.other_cpu_top = std::vector<OtherCpuProcess>{};
  Shown quiet(header_with(2), s);
  EXPECT_EQ(quiet.draw(200, 60).find("5120"), std::string::npos);
}

TEST(TopLayout, SelectedRowIsReverseAcrossTheWidthAndTaggedIsMarked) {
  Shown v(header_with(2), two_jobs());
  v.state.selected = RowKey{0, 100};
  v.state.tagged = {200};
  v.draw(100, 30);
  bool selected = false, tagged = false;
  for (const auto& l : v.screen.lines) {
    std::string row;
    for (const auto& sp : l.spans) row += sp.text;
    if (row.find("train.py") != std::string::npos && l.fill == Style::kSelected)
      selected = true;
    if (row.rfind("* ", 0) == 0 && row.find("finetune") != std::string::npos)
      tagged = true;
  }
  EXPECT_TRUE(selected) << v.text_;
  EXPECT_TRUE(tagged) << v.text_;
}

TEST(TopLayout, StaleGpuIsGreyedWithItsLastValues) {
  Sample s = two_jobs();
  GpuSample stale;
  stale.index = 1;
  stale.stale = true;
  GpuSample good = s.gpus[1];
  s.gpus[1] = stale;
  Shown v(header_with(2), s);
  v.last_good[1] = {good, kT0 - 12};
  const std::string& t = v.draw(120, 30);
  EXPECT_NE(t.find("STALE: no answer within the deadline; values from 12s ago"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("40%"), std::string::npos);
}

TEST(TopLayout, ManyGpusOnASmallTerminalGoCompact) {
  TraceHeader h = header_with(8);
  Sample s = two_jobs();
  for (int i = 2; i < 8; ++i) s.gpus.push_back(gpu(i, 10.0 * i, kGiB));
  Shown v(h, s);
  const std::string& t = v.draw(80, 24);
  expect_exact_size(v.screen, 80, 24);
  for (int i = 0; i < 8; ++i)
    EXPECT_NE(t.find(" " + std::to_string(i) + " A100"), std::string::npos)
        << i << "\n"
        << t;
}

TEST(TopLayout, ReadonlyFooterHasNoKillAndHeaderSaysSo) {
  Shown v(header_with(2), two_jobs());
  v.state.readonly = true;
  const std::string& t = v.draw(100, 30);
  EXPECT_EQ(t.find("k kill"), std::string::npos);
  EXPECT_NE(t.find("[read-only]"), std::string::npos);
}

TEST(TopLayout, HelpOverlayListsTheKeys) {
  Shown v(header_with(2), two_jobs());
  v.state.overlay = Overlay::kHelp;
  const std::string& t = v.draw(100, 40);
  EXPECT_NE(t.find("reverse the sort"), std::string::npos) << t;
  EXPECT_NE(t.find("NO_COLOR"), std::string::npos);
}

TEST(TopLayout, TinyTerminalsDoNotBreak) {
  Shown v(header_with(2), two_jobs());
  for (auto [w, h] : {std::pair{1, 1}, {10, 3}, {40, 10}, {0, 0}}) {
    v.draw(w, h);
    if (w > 0) expect_exact_size(v.screen, w, h);
  }
}

TEST(TopLayout, WrapKeepsWordsAndCutsLongOnes) {
  auto lines = wrap_text("aa bb cc dddddddddd", 5);
  EXPECT_EQ(lines,
            (std::vector<std::string>{"aa bb", "cc", "dddd", "dddd", "dd"}));
}

}  // namespace
}  // namespace gd::top
