#include "views/top/keys.h"

#include <gtest/gtest.h>

#include "top_fixture.h"

namespace gd::top {
namespace {

using namespace test;

Key ch(char32_t c) { return {Key::Kind::kChar, c, 0, 0}; }
Key kind(Key::Kind k) { return {k, 0, 0, 0}; }

struct Keys {
  Sample sample = two_jobs();
  TopState st;
  std::vector<ProcRow> rows;
  Screen screen;
  KeyContext ctx;

  Keys() { refresh(); }
  void refresh() {
    rows = build_rows(sample, st);
    settle_selection(st, rows, 10);
    ctx.rows = &rows;
    ctx.screen = &screen;
    ctx.gpus = {0, 1};
    ctx.users = users_of(sample);
    ctx.page = 10;
  }
  Action press(const Key& k) {
    Action a = handle_key(st, k, ctx);
    refresh();
    return a;
  }
};

TEST(TopKeys, ArrowsMoveTheSelectionAndItFollowsItsProcess) {
  Keys k;
  ASSERT_TRUE(k.st.selected);
  EXPECT_EQ(k.st.selected->pid, 200u);
  k.press(kind(Key::Kind::kDown));
  EXPECT_EQ(k.st.selected->pid, 100u);
  // A re-sort keeps the same process selected.
  k.press(ch('r'));
  EXPECT_EQ(k.st.selected->pid, 100u);
  k.press(kind(Key::Kind::kEnd));
  EXPECT_EQ(k.st.selected->pid, 200u);  // reversed: 300, 100, 200
}

TEST(TopKeys, SortCyclesColumnsAndReverseFlips) {
  Keys k;
  EXPECT_EQ(k.st.sort, Column::kGpuMem);
  k.press(ch('s'));
  EXPECT_EQ(k.st.sort, Column::kSm);
  k.press(ch('<'));
  k.press(ch('<'));
  EXPECT_EQ(k.st.sort, Column::kUser);
  EXPECT_FALSE(k.st.reverse);
  k.press(ch('r'));
  EXPECT_TRUE(k.st.reverse);
}

TEST(TopKeys, TextFilterIsTypedAndEscapeClearsEveryFilter) {
  Keys k;
  k.press(ch('/'));
  ASSERT_TRUE(k.st.typing);
  for (char c : std::string("fine")) k.press(ch(static_cast<char32_t>(c)));
  k.press(kind(Key::Kind::kBackspace));
  k.press(ch('e'));
  k.press(kind(Key::Kind::kEnter));
  EXPECT_EQ(k.st.text_filter, "fine");
  EXPECT_EQ(k.rows.size(), 1u);
  k.press(ch('g'));
  EXPECT_EQ(k.st.gpu_filter, 0);
  k.press(ch('u'));
  EXPECT_EQ(k.st.user_filter, "alice");
  k.press(kind(Key::Kind::kEscape));
  EXPECT_TRUE(k.st.text_filter.empty());
  EXPECT_FALSE(k.st.gpu_filter);
  EXPECT_FALSE(k.st.user_filter);
  EXPECT_EQ(k.rows.size(), 3u);
}

TEST(TopKeys, UserAndGpuFiltersCycleThenTurnOff) {
  Keys k;
  k.press(ch('u'));
  k.press(ch('u'));
  EXPECT_EQ(k.st.user_filter, "bob");
  k.press(ch('u'));
  EXPECT_FALSE(k.st.user_filter);
  k.press(ch('g'));
  k.press(ch('g'));
  EXPECT_EQ(k.st.gpu_filter, 1);
  k.press(ch('g'));
  EXPECT_FALSE(k.st.gpu_filter);
}

TEST(TopKeys, SpaceTagsAndKillTakesTheTaggedOrTheSelected) {
  Keys k;
  Action a = k.press(ch('k'));
  EXPECT_EQ(a.kind, Action::Kind::kKill);
  EXPECT_EQ(a.pids, (std::vector<uint32_t>{200}));
  EXPECT_EQ(k.st.overlay, Overlay::kKill);
  k.press(ch('n'));  // anything but y closes the dialog: nothing sent
  EXPECT_EQ(k.st.overlay, Overlay::kNone);
  k.press(ch(' '));
  k.press(ch(' '));
  EXPECT_EQ(k.st.tagged, (std::set<uint32_t>{100, 200}));
  a = k.press(ch('k'));
  EXPECT_EQ(a.pids, (std::vector<uint32_t>{100, 200}));
  EXPECT_EQ(k.press(ch('y')).kind, Action::Kind::kConfirmKill);
}

TEST(TopKeys, ReadonlyRefusesKillWithTheReason) {
  Keys k;
  k.st.readonly = true;
  k.st.readonly_reason = "started with --readonly";
  Action a = k.press(ch('k'));
  EXPECT_EQ(a.kind, Action::Kind::kNone);
  EXPECT_EQ(k.st.overlay, Overlay::kNone);
  EXPECT_NE(k.st.message.find("--readonly"), std::string::npos);
}

TEST(TopKeys, WhoOpensForTheSelectedProcessesGpu) {
  Keys k;
  k.press(kind(Key::Kind::kDown));  // pid 100 on GPU 0
  Action a = k.press(ch('w'));
  EXPECT_EQ(a.kind, Action::Kind::kWho);
  EXPECT_EQ(a.gpu, 0);
  EXPECT_EQ(k.st.overlay, Overlay::kWho);
}

TEST(TopKeys, TabFocusesFindingsAndEnterOpensOne) {
  Keys k;
  k.ctx.findings = 2;
  k.press(kind(Key::Kind::kTab));
  EXPECT_EQ(k.st.focus, Focus::kFindings);
  k.press(kind(Key::Kind::kDown));
  EXPECT_EQ(k.st.finding, 1u);
  k.press(kind(Key::Kind::kEnter));
  EXPECT_EQ(k.st.overlay, Overlay::kFinding);
  k.press(kind(Key::Kind::kEscape));
  EXPECT_EQ(k.st.overlay, Overlay::kNone);
}

TEST(TopKeys, MouseClickSelectsARowAndSortsByAHeading) {
  Keys k;
  k.screen.hits.push_back({Hit::Kind::kProcessRow, 10, 0, 80, 2});
  k.screen.hits.push_back(
      {Hit::Kind::kColumn, 9, 20, 28, static_cast<size_t>(Column::kCpu)});
  k.press({Key::Kind::kMouseClick, 0, 10, 5});
  EXPECT_EQ(k.st.selected->pid, 300u);
  k.press({Key::Kind::kMouseClick, 0, 9, 22});
  EXPECT_EQ(k.st.sort, Column::kCpu);
  k.press({Key::Kind::kMouseClick, 0, 9, 22});
  EXPECT_TRUE(k.st.reverse);
}

TEST(TopKeys, ReplayKeysControlTheReplay) {
  Keys k;
  k.st.replay = true;
  EXPECT_EQ(k.press(ch(' ')).kind, Action::Kind::kReplayPause);
  EXPECT_EQ(k.press(ch('+')).kind, Action::Kind::kReplayFaster);
  EXPECT_EQ(k.press(ch('-')).kind, Action::Kind::kReplaySlower);
  EXPECT_EQ(k.press(kind(Key::Kind::kLeft)).kind, Action::Kind::kReplayBack);
  EXPECT_EQ(k.press(kind(Key::Kind::kRight)).kind,
            Action::Kind::kReplayForward);
}

TEST(TopKeys, QuitKeys) {
  Keys k;
  EXPECT_EQ(k.press(ch('q')).kind, Action::Kind::kQuit);
  EXPECT_EQ(k.press(kind(Key::Kind::kInterrupt)).kind, Action::Kind::kQuit);
  EXPECT_EQ(k.press(kind(Key::Kind::kF10)).kind, Action::Kind::kQuit);
}

}  // namespace
}  // namespace gd::top
