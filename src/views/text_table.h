// Tables and paragraphs of the text views (ps, status) fitted to the
// terminal's width: a column empty on every row is left out, the last
// column (a command line) takes what is left and is cut with terminal_fit's
// mark, and sentences wrap instead of running off the edge. Width 0 (or
// `wide`) is unlimited: every column, nothing cut.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace gd {

// The width the text views fit: $COLUMNS when it is a number, else the
// terminal's width when stdout is one, else 0 (unlimited: a pipe or a file
// gets every column, for scripts).
size_t output_width();

struct TableColumn {
  std::string title;
  size_t max_width = 0;  // cells wider are cut (0: no cap); not the last
  bool right = false;    // right-aligned
  bool keep = false;     // shown even when every cell is empty
};

// A row: one cell per column (untrusted text is made safe here), then
// lines printed under it, indented, wrapped to the width ("" none).
struct TableRow {
  std::vector<std::string> cells;
  std::string note;
};

// Cells "", "-" and "n/a" are empty. Columns are one space apart; the
// last column takes what is left of `width` (at least 12 columns: the
// columns not `keep` are left out from the right until it has).
std::string render_table(const std::vector<TableColumn>& columns,
                         const std::vector<TableRow>& rows, size_t width,
                         bool wide);

// Lines of "label value  label value" (status): each line longer than
// `width` is broken at its double spaces, the pieces packed on lines
// indented as the line was (5 columns for a line at the margin); a piece
// still too long wraps at single spaces. `text` is already terminal-safe.
// Width 0: unchanged.
std::string fit_lines(const std::string& text, size_t width);

// `text` wrapped to `width` columns at spaces, continuation lines indented
// by `hang` spaces; each line ends in "\n". Width 0: one line.
std::string wrap_paragraph(const std::string& text, size_t width,
                           size_t hang = 0);

}  // namespace gd
