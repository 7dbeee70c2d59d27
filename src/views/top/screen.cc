#include "views/top/screen.h"

#include <algorithm>

#include "common/terminal_text.h"

namespace gd::top {

std::string Screen::text() const {
  std::string out;
  for (const auto& l : lines) {
    std::string row;
    for (const auto& s : l.spans) row += s.text;
    while (!row.empty() && row.back() == ' ') row.pop_back();
    out += row;
    out += '\n';
  }
  return out;
}

namespace {

// Printable ASCII is already terminal-safe and one column per byte: most
// spans of a frame are, and skip the sanitiser's work.
bool plain_ascii(std::string_view text) {
  for (char c : text)
    if (c < 0x20 || c > 0x7e) return false;
  return true;
}

}  // namespace

int columns_of(std::string_view text) {
  if (plain_ascii(text)) return static_cast<int>(text.size());
  return static_cast<int>(terminal_width(terminal_safe(text)));
}

int LineBuilder::add(std::string_view text, Style style) {
  if (text.empty() || used_ >= width_) return 0;
  const bool ascii = plain_ascii(text);
  std::string safe = ascii ? std::string(text) : terminal_safe(text);
  int w = ascii ? static_cast<int>(safe.size())
                : static_cast<int>(terminal_width(safe));
  if (w > width_ - used_) {
    safe = terminal_fit(safe, static_cast<size_t>(width_ - used_));
    w = static_cast<int>(terminal_width(safe));
  }
  if (!line_.spans.empty() && line_.spans.back().style == style)
    line_.spans.back().text += safe;
  else
    line_.spans.push_back({std::move(safe), style});
  used_ += w;
  return w;
}

void LineBuilder::cell(std::string_view text, int columns, Style style,
                       bool right) {
  if (columns <= 0) return;
  std::string fit;
  if (plain_ascii(text) && text.size() <= static_cast<size_t>(columns))
    fit = std::string(text);
  else
    fit = terminal_fit(text, static_cast<size_t>(columns));
  int pad = columns - columns_of(fit);
  if (right) spaces(pad, style);
  add(fit, style);
  if (!right) spaces(pad, style);
}

void LineBuilder::spaces(int n, Style style) {
  if (n <= 0) return;
  n = std::min(n, width_ - used_);
  if (n <= 0) return;
  add(std::string(static_cast<size_t>(n), ' '), style);
}

Line LineBuilder::done(Style fill) {
  Line out = std::move(line_);
  out.fill = fill;
  if (used_ < width_) {
    std::string pad(static_cast<size_t>(width_ - used_), ' ');
    if (!out.spans.empty() && out.spans.back().style == fill)
      out.spans.back().text += pad;
    else
      out.spans.push_back({std::move(pad), fill});
  }
  line_ = {};
  used_ = 0;
  return out;
}

}  // namespace gd::top
