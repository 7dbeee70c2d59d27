#include "views/text_table.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "common/terminal_text.h"

namespace gd {
namespace {

// The least the last column gets, and the widest width anyone means.
constexpr size_t kMinLastColumn = 12;
constexpr size_t kMaxWidth = 10000;

bool empty_cell(const std::string& c) {
  return c.empty() || c == "-" || c == "n/a";
}

std::string pad(const std::string& safe, size_t columns, bool right) {
  const size_t w = terminal_width(safe);
  const std::string fill(columns > w ? columns - w : 0, ' ');
  return right ? fill + safe : safe + fill;
}

}  // namespace

size_t output_width() {
  if (const char* c = std::getenv("COLUMNS"); c && *c) {
    char* end = nullptr;
    const long v = std::strtol(c, &end, 10);
    if (*end == '\0' && v > 0) return std::min<size_t>(v, kMaxWidth);
  }
  winsize ws{};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 &&
      ws.ws_col > 0)
    return ws.ws_col;
  return 0;
}

std::string render_table(const std::vector<TableColumn>& columns,
                         const std::vector<TableRow>& rows, size_t width,
                         bool wide) {
  if (wide) width = 0;
  const size_t n = columns.size();
  // The cells as shown: safe, capped unless wide.
  std::vector<std::vector<std::string>> cells(rows.size());
  std::vector<bool> shown(n, wide);
  std::vector<size_t> widths(n, 0);
  for (size_t c = 0; c < n; ++c) {
    shown[c] = shown[c] || columns[c].keep;
    widths[c] = terminal_width(terminal_safe(columns[c].title));
  }
  for (size_t r = 0; r < rows.size(); ++r)
    for (size_t c = 0; c < n; ++c) {
      const std::string& raw = c < rows[r].cells.size() ? rows[r].cells[c] : "";
      std::string cell = columns[c].max_width && !wide && c + 1 < n
                             ? terminal_fit(raw, columns[c].max_width)
                             : terminal_safe(raw);
      if (!empty_cell(raw)) shown[c] = true;
      if (c + 1 < n) widths[c] = std::max(widths[c], terminal_width(cell));
      cells[r].push_back(std::move(cell));
    }
  // What is left for the last column; where that is too little, the
  // columns that may go go from the right (ps: CUDA, CONTAINER, ...).
  auto used_width = [&] {
    size_t used = 0;
    for (size_t c = 0; c + 1 < n; ++c)
      if (shown[c]) used += widths[c] + 1;
    return used;
  };
  for (size_t c = n - 1; width > 0 && c-- > 0;)
    if (used_width() + kMinLastColumn > width && shown[c] && !columns[c].keep)
      shown[c] = false;
  const size_t used = used_width();
  const size_t last =
      width == 0 ? 0
                 : std::max(kMinLastColumn, width > used ? width - used : 0);
  auto line = [&](auto cell_of) {
    std::string out;
    for (size_t c = 0; c < n; ++c) {
      if (!shown[c] && c + 1 < n) continue;
      if (c + 1 < n) {
        out += pad(cell_of(c), widths[c], columns[c].right) + " ";
      } else {
        out += last ? terminal_fit(cell_of(c), last) : cell_of(c);
      }
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out =
      line([&](size_t c) { return terminal_safe(columns[c].title); });
  for (size_t r = 0; r < rows.size(); ++r) {
    out += line([&](size_t c) { return cells[r][c]; });
    if (!rows[r].note.empty())
      out += wrap_paragraph("    " + rows[r].note, width, 8);
  }
  return out;
}

std::string fit_lines(const std::string& text, size_t width) {
  if (width == 0) return text;
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    const std::string line = text.substr(start, nl - start);
    start = nl + 1;
    if (terminal_width(line) <= width) {
      out += line + "\n";
      continue;
    }
    size_t lead = line.find_first_not_of(' ');
    if (lead == std::string::npos) lead = line.size();
    const std::string indent(lead == 0 ? 5 : lead, ' ');
    std::string cur = line.substr(0, lead);
    bool fresh = true;
    size_t at = lead;
    while (at < line.size()) {
      size_t end = line.find("  ", at);
      if (end == std::string::npos) end = line.size();
      const std::string piece = line.substr(at, end - at);
      at = line.find_first_not_of(' ', end);
      if (at == std::string::npos) at = line.size();
      if (piece.empty()) continue;
      if (!fresh && terminal_width(cur) + 2 + terminal_width(piece) > width) {
        out += cur + "\n";
        cur = indent;
        fresh = true;
      }
      cur += (fresh ? "" : "  ") + piece;
      fresh = false;
      if (terminal_width(cur) > width) {  // one piece too long: wrap it
        std::string wrapped = wrap_paragraph(cur, width, indent.size() + 2);
        const size_t last_nl = wrapped.rfind('\n', wrapped.size() - 2);
        out += wrapped.substr(0, last_nl + 1);
        cur = wrapped.substr(last_nl + 1);
        cur.pop_back();  // its "\n"
      }
    }
    out += cur + "\n";
  }
  return out;
}

std::string wrap_paragraph(const std::string& text, size_t width, size_t hang) {
  const std::string safe = terminal_safe(text, kTerminalSentenceMax);
  if (width == 0 || terminal_width(safe) <= width) return safe + "\n";
  hang = std::min(hang, width / 2);
  std::string out, line;
  size_t line_w = 0;
  bool fresh = true;  // no word on the line yet
  auto flush = [&] {
    out += line + "\n";
    line = std::string(hang, ' ');
    line_w = hang;
    fresh = true;
  };
  size_t at = 0;
  // Leading spaces are kept as the first line's indent.
  while (at < safe.size() && safe[at] == ' ') {
    line += ' ';
    ++line_w;
    ++at;
  }
  while (at < safe.size()) {
    size_t end = safe.find(' ', at);
    if (end == std::string::npos) end = safe.size();
    std::string word = safe.substr(at, end - at);
    at = end + 1;
    if (word.empty()) continue;
    size_t ww = terminal_width(word);
    if (!fresh && line_w + 1 + ww > width) flush();
    if (line_w + ww > width) {  // longer than a line: cut with the mark
      word = terminal_fit(word, width > line_w ? width - line_w : 1);
      ww = terminal_width(word);
    }
    if (!fresh) {
      line += ' ';
      ++line_w;
    }
    line += word;
    line_w += ww;
    fresh = false;
  }
  out += line + "\n";
  return out;
}

}  // namespace gd
