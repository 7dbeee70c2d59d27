// The screen of `top` as plain data: lines of styled spans, exactly as wide
// as the terminal, plus where on it the clickable things are. The layout
// (layout.h) builds it without a terminal, so it is unit-tested; the
// terminal module only copies it to ncurses.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gd::top {

// What a span means; the terminal maps it to colours, or to bold / reverse /
// underline in monochrome.
enum class Style : uint8_t {
  kNormal,
  kDim,  // secondary text, and every value of a stale GPU
  kBold,
  kTitle,      // the header line
  kHeading,    // table header and overlay titles (reverse video)
  kSorted,     // the sort column's heading
  kGood,       // well within limits
  kWarn,       // near a limit
  kCrit,       // at or past a limit; critical findings
  kInfo,       // info findings
  kBarUtil,    // the filled part of a utilisation bar
  kBarMem,     // memory held by live processes
  kBarOrphan,  // memory held by no live process
  kSelected,   // the selected row (reverse video)
  kTagged,     // a tagged row
  kKey,        // a key in the footer
  kChart,
  kChartAlt,  // the second chart of a pair
};
inline constexpr size_t kStyleCount = 18;

struct Span {
  std::string text;  // terminal_safe text, never a control byte
  Style style = Style::kNormal;
};

struct Line {
  std::vector<Span> spans;
  // Style of the padding after the last span (a selected row is reverse
  // video across the whole width).
  Style fill = Style::kNormal;
};

// Something the mouse can hit.
struct Hit {
  enum class Kind { kProcessRow, kFinding, kColumn };
  Kind kind = Kind::kProcessRow;
  int y = 0;           // screen line
  int x0 = 0, x1 = 0;  // columns [x0, x1) (whole line for rows)
  size_t index = 0;    // row, finding or column index
};

struct Screen {
  int width = 0, height = 0;
  std::vector<Line> lines;  // exactly `height`
  std::vector<Hit> hits;
  // The text of the screen (tests and text captures), one line each.
  std::string text() const;
};

// Appends spans to one line without passing `width` display columns; every
// text goes through terminal_fit, so no control byte of any string reaches
// the screen whatever the caller passes.
class LineBuilder {
 public:
  explicit LineBuilder(int width) : width_(width) {}
  // Adds as much of `text` as fits; returns the columns it took.
  int add(std::string_view text, Style style = Style::kNormal);
  // `text` cut or padded to exactly `columns` (right-aligned when `right`).
  void cell(std::string_view text, int columns, Style style = Style::kNormal,
            bool right = false);
  void spaces(int n, Style style = Style::kNormal);
  int used() const { return used_; }
  int left() const { return width_ - used_; }
  Line done(Style fill = Style::kNormal);

 private:
  int width_;
  int used_ = 0;
  Line line_;
};

// Display columns of text (after terminal_safe).
int columns_of(std::string_view text);

}  // namespace gd::top
