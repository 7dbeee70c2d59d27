// The terminal draws a frame over the last one by writing only what changed
// in each line. Whatever changed (a digit, a wider number, a style, a wide
// or combining character, a shorter line), the screen ncurses holds after
// frame B drawn over frame A must be the one frame B drawn alone leaves.
#include "views/top/terminal.h"

#include <gtest/gtest.h>

#include <clocale>
#include <cstdio>
#include <string>
#include <vector>

#include "views/top/screen.h"

namespace gd::top {
namespace {

constexpr int kWidth = 40, kHeight = 4;

// One line of spans (text, style), padded to the width as top's lines are.
Line line(std::vector<std::pair<std::string, Style>> spans) {
  LineBuilder b(kWidth);
  for (auto& [text, style] : spans) b.add(text, style);
  b.spaces(b.left());
  return b.done();
}

Screen screen(Line middle) {
  Screen s;
  s.width = kWidth;
  s.height = kHeight;
  s.lines = {line({{"gpudoctor top", Style::kTitle}}), std::move(middle),
             line({{"unchanged below", Style::kNormal}}), line({})};
  return s;
}

// The cells after drawing `frames` in turn on a fresh terminal. (One
// terminal at a time: each one started becomes ncurses' current screen.)
std::vector<std::string> cells_after(const std::vector<Screen>& frames) {
  std::FILE* out = std::fopen("/dev/null", "w");
  std::vector<std::string> cells;
  {
    Terminal term(false, out, "xterm-256color", kWidth, kHeight);
    for (const Screen& s : frames) term.draw(s);
    cells = term.cells_for_test();
  }
  std::fclose(out);
  return cells;
}

struct Change {
  const char* what;
  Line before, after;
};

TEST(TerminalDraw, AFrameOverAnotherLeavesWhatItWouldAlone) {
  ASSERT_NE(std::setlocale(LC_ALL, "C.UTF-8"), nullptr);
  const std::vector<Change> changes = {
      {"a digit", line({{"util 45%  power 300 W", Style::kNormal}}),
       line({{"util 46%  power 300 W", Style::kNormal}})},
      {"a wider number",
       line({{"util 9%  ", Style::kNormal}, {"power 300 W", Style::kBold}}),
       line({{"util 100%  ", Style::kNormal}, {"power 300 W", Style::kBold}})},
      {"a narrower number", line({{"mem 10.5 GiB of 80", Style::kNormal}}),
       line({{"mem 9 GiB of 80", Style::kNormal}})},
      {"a style alone",
       line({{"temp ", Style::kNormal}, {"71 C", Style::kNormal}}),
       line({{"temp ", Style::kNormal}, {"71 C", Style::kCrit}})},
      {"a chart's newest column", line({{"▁▂▃▄▅▆▇█ 97%", Style::kGood}}),
       line({{"▂▃▄▅▆▇█▇ 95%", Style::kGood}})},
      {"a wide character for two narrow ones",
       line({{"job 漢字 running", Style::kNormal}}),
       line({{"job ab字 running", Style::kNormal}})},
      {"two narrow ones for a wide character",
       line({{"job ab字 running", Style::kNormal}}),
       line({{"job 漢字 running", Style::kNormal}})},
      {"a combining mark added", line({{"cafe 1 2 3", Style::kNormal}}),
       line({{"cafe\xcc\x81 1 2 3", Style::kNormal}})},
      {"a combining mark's base changed",
       line({{"cafe\xcc\x81 1 2 3", Style::kNormal}}),
       line({{"cafa\xcc\x81 1 2 3", Style::kNormal}})},
      {"a shorter line", line({{"a long line of text here", Style::kDim}}),
       Line{{{"short", Style::kDim}}, Style::kNormal}},
      {"the line's last column",
       line({{std::string(kWidth - 1, '.') + "1", Style::kNormal}}),
       line({{std::string(kWidth - 1, '.') + "2", Style::kNormal}})},
      {"the same line", line({{"nothing changes", Style::kNormal}}),
       line({{"nothing changes", Style::kNormal}})},
  };
  for (const Change& c : changes) {
    const Screen a = screen(c.before), b = screen(c.after);
    const auto over = cells_after({a, b});
    const auto alone = cells_after({b});
    ASSERT_EQ(over.size(), static_cast<size_t>(kHeight)) << c.what;
    EXPECT_EQ(over, alone) << c.what;
    // And back: A drawn over B.
    EXPECT_EQ(cells_after({b, a}), cells_after({a})) << c.what << ", back";
  }
}

// A resize draws everything again.
TEST(TerminalDraw, AFrameOfAnotherSizeIsDrawnWhole) {
  ASSERT_NE(std::setlocale(LC_ALL, "C.UTF-8"), nullptr);
  Screen a = screen(line({{"util 45%", Style::kNormal}}));
  Screen b = screen(line({{"util 46%", Style::kNormal}}));
  b.width = kWidth - 1;  // as a frame laid out for another size
  std::vector<std::string> drawn;
  std::FILE* out = std::fopen("/dev/null", "w");
  {
    Terminal term(false, out, "xterm-256color", kWidth, kHeight);
    term.draw(a);
    term.draw(b);
    b.width = kWidth;
    term.draw(b);
    drawn = term.cells_for_test();
  }
  std::fclose(out);
  EXPECT_EQ(drawn, cells_after({b}));
}

}  // namespace
}  // namespace gd::top
