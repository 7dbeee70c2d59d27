#include "views/top/fleet.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include "common/bytes_text.h"
#include "common/terminal_text.h"
#include "views/top/parts.h"
#include "views/top/typed_text.h"

namespace gd::top {
namespace {

using monitor::FleetFrame;
using monitor::FleetNodeState;

// "45s", "2m", "3h", "4d": how old a node's data is.
std::string age_text(double s) {
  if (!(s >= 0)) s = 0;
  if (s < 60) return fmt::format("{:.0f}s", std::floor(s));
  if (s < 3600) return fmt::format("{:.0f}m", std::floor(s / 60));
  if (s < 86400) return fmt::format("{:.0f}h", std::floor(s / 3600));
  return fmt::format("{:.0f}d", std::min(9999.0, std::floor(s / 86400)));
}

std::string status_text(const FleetRow& r) {
  switch (r.status) {
    case NodeStatus::kOk:
      return "ok " + age_text(r.age_s);
    case NodeStatus::kStale:
      return "stale " + age_text(r.age_s);
    case NodeStatus::kGone:
      return "gone " + age_text(r.age_s);
    case NodeStatus::kRefused:
      return "refused";
  }
  return {};
}

Style status_style(NodeStatus s) {
  switch (s) {
    case NodeStatus::kOk:
      return Style::kGood;
    case NodeStatus::kStale:
      return Style::kWarn;
    case NodeStatus::kGone:
    case NodeStatus::kRefused:
      return Style::kCrit;
  }
  return Style::kNormal;
}

bool greyed(NodeStatus s) { return s != NodeStatus::kOk; }

// One column per GPU, its height the share (0..1); '?' unknown.
void add_spark(LineBuilder& b, const std::vector<std::optional<double>>& v,
               int columns, Style style, bool unicode, bool dim) {
  static const char* const kBlocks[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  static const char kAscii[] = "_.:-=+*#";
  int used = 0;
  const size_t shown = v.size() > static_cast<size_t>(columns)
                           ? static_cast<size_t>(std::max(0, columns - 1))
                           : v.size();
  for (size_t i = 0; i < shown; ++i, ++used) {
    if (!v[i] || !std::isfinite(*v[i])) {
      b.add("?", Style::kDim);
      continue;
    }
    const int level =
        std::clamp(static_cast<int>(std::lround(*v[i] * 7)), 0, 7);
    Style s = dim ? Style::kDim : style;
    if (!dim && style == Style::kBarMem && *v[i] >= 0.95) s = Style::kCrit;
    b.add(unicode ? std::string(kBlocks[level]) : std::string(1, kAscii[level]),
          s);
  }
  if (shown < v.size()) {
    b.add("+", Style::kDim);
    ++used;
  }
  b.spaces(columns - used);
}

const GpuInfo* info_of(const TraceHeader& h, int index) {
  for (const auto& g : h.gpus)
    if (g.index == index) return &g;
  return nullptr;
}

struct Columns {
  int node = 20, status = 9, gpus = 4, bars = 8, temp = 5, power = 7, n = 3;
};

Columns columns_for(int width) {
  Columns c;
  c.node = std::clamp(width / 6, 12, 32);
  return c;
}

void add_header(std::vector<Line>& out, const FleetLayoutInput& in,
                const std::string& what, int width) {
  const FleetFrame& f = *in.frame;
  LineBuilder b(width);
  std::string right = fmt::format("[every {:g}s]", f.interval_s);
  b.add("gpudoctor top — " + what, Style::kTitle);
  if (f.t > 0) b.add("  " + clock_text(f.t, false), Style::kTitle);
  b.spaces(b.left() - columns_of(right), Style::kTitle);
  b.add(right, Style::kTitle);
  out.push_back(b.done(Style::kTitle));
}

// The round's state: why it failed, or how the fleet stands.
void add_summary(std::vector<Line>& out, const FleetLayoutInput& in,
                 int width) {
  const FleetFrame& f = *in.frame;
  LineBuilder b(width);
  if (!f.error.empty()) {
    b.add("cannot read the fleet: " + f.error, Style::kCrit);
    out.push_back(b.done());
    return;
  }
  if (f.t == 0) {
    b.add("reading " + f.source + " ...", Style::kDim);
    out.push_back(b.done());
    return;
  }
  size_t crit = 0, warn = 0, stale = 0, gone = 0;
  for (const auto& r : *in.rows) {
    crit += r.worst_severity == "critical";
    warn += r.worst_severity == "warning";
    stale += r.status == NodeStatus::kStale;
    gone += r.status == NodeStatus::kGone || r.status == NodeStatus::kRefused;
  }
  b.add(
      fmt::format("{} node{}", f.nodes.size(), f.nodes.size() == 1 ? "" : "s"),
      Style::kBold);
  if (in.rows->size() != f.nodes.size())
    b.add(fmt::format(" ({} shown)", in.rows->size()));
  b.add("  ");
  b.add(fmt::format("{} critical", crit), crit ? Style::kCrit : Style::kDim);
  b.add("  ");
  b.add(fmt::format("{} warning", warn), warn ? Style::kWarn : Style::kDim);
  b.add("  ");
  b.add(fmt::format("{} stale", stale), stale ? Style::kWarn : Style::kDim);
  b.add("  ");
  b.add(fmt::format("{} not answering", gone),
        gone ? Style::kCrit : Style::kDim);
  if (f.nodes_left_out)
    b.add(fmt::format("  (+{} nodes past the bound of {})", f.nodes_left_out,
                      promsource::kMaxFleetNodes),
          Style::kWarn);
  if (f.series_unnamed)
    b.add(fmt::format("  (+{} GPU series naming no host, left out)",
                      f.series_unnamed),
          Style::kWarn);
  b.add(fmt::format("  round {:.2f}s", f.round_s), Style::kDim);
  out.push_back(b.done());
}

Line heading(const Columns& c, int width) {
  LineBuilder b(width);
  b.cell("NODE", c.node, Style::kHeading);
  b.add(" ", Style::kHeading);
  b.cell("DATA", c.status, Style::kHeading);
  b.cell("GPUS", c.gpus, Style::kHeading, true);
  b.add(" ", Style::kHeading);
  b.cell("UTIL", c.bars, Style::kHeading);
  b.add(" ", Style::kHeading);
  b.cell("MEM", c.bars, Style::kHeading);
  b.add(" ", Style::kHeading);
  b.cell("TEMP", c.temp, Style::kHeading, true);
  b.cell("POWER", c.power, Style::kHeading, true);
  b.cell("N", c.n + 1, Style::kHeading, true);
  b.add(" WORST FINDING", Style::kHeading);
  return b.done(Style::kHeading);
}

Line node_row(const FleetRow& r, const Columns& c, int width, bool selected,
              bool unicode) {
  const FleetNodeState& n = *r.node;
  const bool dim = greyed(r.status);
  const Style text = dim ? Style::kDim : Style::kNormal;
  LineBuilder b(width);
  b.cell(n.data.node, c.node, selected ? Style::kSelected : Style::kBold);
  b.add(" ");
  b.cell(status_text(r), c.status, status_style(r.status));
  const auto& gpus = n.data.sample.gpus;
  const size_t count = std::max(gpus.size(), n.data.header.gpus.size());
  b.cell(count ? fmt::format("{}", count) : "-", c.gpus,
         count ? text : Style::kDim, true);
  b.add(" ");
  std::vector<std::optional<double>> util, mem;
  std::optional<int> hottest;
  const GpuSample* hot = nullptr;
  double power = 0;
  bool any_power = false;
  for (const auto& g : gpus) {
    util.push_back(g.util_pct ? std::optional(*g.util_pct / 100)
                              : std::nullopt);
    const GpuInfo* info = info_of(n.data.header, g.index);
    if (g.mem_used_bytes && info && info->memory_total_bytes &&
        *info->memory_total_bytes > 0)
      mem.push_back(static_cast<double>(*g.mem_used_bytes) /
                    static_cast<double>(*info->memory_total_bytes));
    else
      mem.push_back(std::nullopt);
    if (g.temp_c && (!hottest || *g.temp_c > *hottest)) {
      hottest = g.temp_c;
      hot = &g;
    }
    if (g.power_w && std::isfinite(*g.power_w)) {
      power += *g.power_w;
      any_power = true;
    }
  }
  add_spark(b, util, c.bars, Style::kBarUtil, unicode, dim);
  b.add(" ");
  add_spark(b, mem, c.bars, Style::kBarMem, unicode, dim);
  b.add(" ");
  if (hottest)
    b.cell(fmt::format("{}°C", *hottest), c.temp,
           dim ? Style::kDim
               : temp_style(info_of(n.data.header, hot->index), *hot),
           true);
  else
    b.cell("-", c.temp, Style::kDim, true);
  if (any_power)
    b.cell(power >= 10000 ? fmt::format("{:.1f}kW", power / 1000)
                          : fmt::format("{:.0f}W", power),
           c.power, text, true);
  else
    b.cell("-", c.power, Style::kDim, true);
  b.cell(r.findings ? fmt::format("{}", r.findings) : "", c.n + 1, text, true);
  b.add(" ");
  if (!r.worst_id.empty()) {
    Style s = dim ? Style::kDim : severity_style(r.worst_severity);
    b.add(severity_word(r.worst_severity), s);
    b.add(" ");
    b.add(r.worst_id, s);
  } else if (r.status == NodeStatus::kRefused) {
    b.add("not judged: " + n.data.error, Style::kDim);
  } else {
    b.add("-", Style::kDim);
  }
  return b.done(selected ? Style::kSelected : Style::kNormal);
}

Line footer(const FleetViewState& st, int width, bool open) {
  LineBuilder b(width);
  if (st.typing) {
    b.add("filter (node or finding id): ", Style::kKey);
    b.add(*st.typing);
    b.add("_", Style::kKey);
    return b.done();
  }
  auto key = [&](const char* k, const char* what) {
    b.add(k, Style::kKey);
    b.add(std::string(" ") + what + " ");
  };
  if (open) {
    key("↑↓", "scroll");
    key("r", "refresh");
    key("q/Esc", "back to the fleet");
    key("Ctrl-C", "quit");
  } else {
    key("↑↓", "select");
    key("Enter", "open node");
    key("/", "filter");
    key("Esc", "clear filter");
    key("r", "refresh");
    key("q", "quit");
    if (!st.filter.empty()) b.add("[filter: " + st.filter + "]", Style::kWarn);
  }
  return b.done();
}

const FleetNodeState* find_node(const FleetFrame& f, const std::string& name) {
  for (const auto& n : f.nodes)
    if (n.data.node == name) return &n;
  return nullptr;
}

// The open node's GPU processes, compact: as the source read them for it.
void add_process_lines(std::vector<Line>& out, const monitor::FleetProcesses& p,
                       const std::string& node, int width) {
  out.push_back(LineBuilder(width).done());
  LineBuilder h(width);
  const bool ours = p.asked && p.node == node;
  h.add(ours && p.note.empty()
            ? fmt::format("processes ({})", p.rows.size() + p.left_out)
            : std::string("processes"),
        Style::kHeading);
  out.push_back(h.done(Style::kHeading));
  if (!ours || !p.note.empty() || p.rows.empty()) {
    LineBuilder b(width);
    b.add(!ours             ? "reading ..."
          : !p.note.empty() ? p.note
                            : "no GPU process",
          Style::kDim);
    out.push_back(b.done());
    return;
  }
  LineBuilder t(width);
  t.cell("PID", 8, Style::kHeading, true);
  t.add(" ", Style::kHeading);
  t.cell("USER", 12, Style::kHeading);
  t.cell("GPU", 4, Style::kHeading, true);
  t.cell("GPU MEM", 10, Style::kHeading, true);
  t.cell("CPU%", 7, Style::kHeading, true);
  t.add("  NAME", Style::kHeading);
  out.push_back(t.done(Style::kHeading));
  for (const auto& r : p.rows) {
    LineBuilder b(width);
    b.cell(r.pid, 8, Style::kNormal, true);
    b.add(" ");
    b.cell(r.user.empty() ? "?" : r.user, 12);
    b.cell(fmt::format("{}", r.gpu), 4, Style::kNormal, true);
    b.cell(r.gpu_mem_bytes ? human_bytes_brief(*r.gpu_mem_bytes) : "-", 10,
           Style::kNormal, true);
    b.cell(r.cpu_pct ? fmt::format("{:.0f}", *r.cpu_pct) : "-", 7,
           Style::kNormal, true);
    b.add("  ");
    b.add(r.name.empty() ? "?" : r.name, Style::kBold);
    out.push_back(b.done());
  }
  if (p.left_out) {
    LineBuilder b(width);
    b.add(fmt::format("(+{} processes past the bound of {})", p.left_out,
                      monitor::kMaxFleetProcesses),
          Style::kDim);
    out.push_back(b.done());
  }
}

// The open node's lines: its state, its GPUs as top's panels, its findings
// and what could not be judged.
std::vector<Line> node_lines(const FleetLayoutInput& in,
                             const FleetNodeState& n, int width) {
  std::vector<Line> out;
  const FleetFrame& f = *in.frame;
  std::vector<FleetRow> one = fleet_rows(f, "", in.now);
  FleetRow row;
  for (const auto& r : one)
    if (r.node == &n) row = r;
  {
    LineBuilder b(width);
    b.add("data: ");
    b.add(status_text(row), status_style(row.status));
    if (row.status == NodeStatus::kStale)
      b.add(fmt::format(": its newest sample is {} old; values greyed",
                        age_text(row.age_s)),
            Style::kWarn);
    if (row.status == NodeStatus::kGone && !n.problem.empty())
      b.add(fmt::format(": not answering ({}); the last values, {} old, "
                        "greyed",
                        n.problem, age_text(row.age_s)),
            Style::kCrit);
    else if (row.status == NodeStatus::kGone)
      b.add(fmt::format(": no series within Prometheus' lookback; the last "
                        "values, {} old, greyed",
                        age_text(row.age_s)),
            Style::kCrit);
    if (row.status == NodeStatus::kRefused)
      b.add(": " + n.data.error, Style::kCrit);
    out.push_back(b.done());
  }
  // top's GPU panels, over a frame of the node's one sample.
  monitor::Frame frame;
  frame.header = std::make_shared<const TraceHeader>(n.data.header);
  auto sample = std::make_shared<Sample>(n.data.sample);
  std::map<int, std::pair<GpuSample, double>> last_good;
  if (greyed(row.status))
    for (auto& g : sample->gpus) {
      last_good[g.index] = {g, n.data.last_seen};
      g.stale = true;
    }
  frame.sample = sample;
  LayoutInput li;
  li.frame = &frame;
  li.last_good = &last_good;
  li.now = in.now;
  li.unicode = in.unicode;
  const bool compact = frame.header->gpus.size() > 8;
  for (const auto& info : frame.header->gpus)
    add_gpu_panel(out, li, info, width, compact);
  if (frame.header->gpus.empty()) {
    LineBuilder b(width);
    b.add("no GPU values in this round", Style::kDim);
    out.push_back(b.done());
  }
  add_process_lines(out, f.processes, n.data.node, width);
  out.push_back(LineBuilder(width).done());
  LineBuilder h(width);
  // Who judged: this top (this refresh's sample and the window's scrapes)
  // or the node's own serve.
  std::string by = f.findings_of;
  if (by.empty() && n.window_samples > 1)
    by = fmt::format("this refresh's sample, and its last {} scrapes ({})",
                     n.window_samples, age_text(n.window_span_s));
  else if (by.empty())
    by = "this refresh's sample";
  h.add(fmt::format("findings ({}): {}", n.judged.findings.size(), by),
        Style::kHeading);
  out.push_back(h.done(Style::kHeading));
  if (f.findings_of.empty() && !f.window_note.empty())
    for (const auto& l : wrap_text(f.window_note, std::max(10, width - 2))) {
      LineBuilder b(width);
      b.add(l, Style::kDim);
      out.push_back(b.done());
    }
  if (n.judged.findings.empty()) {
    LineBuilder b(width);
    b.add(n.data.error.empty() ? "none" : "not judged: " + n.data.error,
          Style::kDim);
    out.push_back(b.done());
  }
  for (const auto& c : n.judged.findings) {
    LineBuilder b(width);
    Style s = severity_style(c.finding.severity);
    b.add(std::string("  ") + severity_word(c.finding.severity) + " ", s);
    b.cell(c.finding.id, 26, s);
    b.add(" " + c.finding.title);
    out.push_back(b.done());
    for (const auto& l : wrap_text("evidence: " + c.finding.evidence,
                                   std::max(10, width - 8))) {
      LineBuilder e(width);
      e.spaces(8);
      e.add(l, Style::kDim);
      out.push_back(e.done());
    }
  }
  if (!n.judged.not_judged.empty()) {
    std::string ids;
    for (const auto& nj : n.judged.not_judged)
      ids += (ids.empty() ? "" : ", ") + nj.id;
    for (const auto& l : wrap_text(fmt::format("not judged ({}): {}",
                                               n.judged.not_judged.size(), ids),
                                   std::max(10, width - 2))) {
      LineBuilder b(width);
      b.add(l, Style::kDim);
      out.push_back(b.done());
    }
  }
  return out;
}

constexpr int kChromeLines = 4;  // header, summary, heading, footer

}  // namespace

int fleet_table_rows(int height) { return std::max(1, height - kChromeLines); }

Screen fleet_layout(const FleetLayoutInput& in, int width, int height) {
  Screen s;
  s.width = width;
  s.height = height;
  const FleetViewState& st = *in.state;
  const FleetNodeState* open =
      st.open ? find_node(*in.frame, *st.open) : nullptr;
  if (open) {
    add_header(s.lines, in, "node " + open->data.node, width);
    std::vector<Line> body = node_lines(in, *open, width);
    const size_t room = static_cast<size_t>(std::max(0, height - 2));
    const size_t first = std::min(
        st.open_scroll, body.size() > room ? body.size() - room : size_t{0});
    for (size_t i = first;
         i < body.size() && s.lines.size() + 1 < static_cast<size_t>(height);
         ++i)
      s.lines.push_back(std::move(body[i]));
  } else {
    add_header(s.lines, in, "fleet " + in.frame->source, width);
    add_summary(s.lines, in, width);
    const Columns c = columns_for(width);
    s.lines.push_back(heading(c, width));
    const auto& rows = *in.rows;
    const int page = fleet_table_rows(height);
    for (size_t i = st.scroll;
         i < rows.size() && i < st.scroll + static_cast<size_t>(page); ++i) {
      const bool sel = st.selected && rows[i].node->data.node == *st.selected;
      s.hits.push_back({Hit::Kind::kProcessRow,
                        static_cast<int>(s.lines.size()), 0, width, i});
      s.lines.push_back(node_row(rows[i], c, width, sel, in.unicode));
    }
    if (rows.empty() && in.frame->t > 0) {
      LineBuilder b(width);
      b.add(st.filter.empty() ? "no node has DCGM_FI_DEV_GPU_UTIL series"
                              : "no node matches the filter",
            Style::kDim);
      s.lines.push_back(b.done());
    }
  }
  while (static_cast<int>(s.lines.size()) < height - 1)
    s.lines.push_back(LineBuilder(width).done());
  s.lines.resize(static_cast<size_t>(std::max(0, height - 1)));
  if (height > 0) s.lines.push_back(footer(st, width, open != nullptr));
  return s;
}

void settle_fleet_selection(FleetViewState& st,
                            const std::vector<FleetRow>& rows, int page) {
  if (rows.empty()) {
    st.scroll = 0;
    return;
  }
  size_t at = 0;
  bool found = false;
  if (st.selected)
    for (size_t i = 0; i < rows.size(); ++i)
      if (rows[i].node->data.node == *st.selected) {
        at = i;
        found = true;
        break;
      }
  if (!found) st.selected = rows[0].node->data.node;
  const size_t p = static_cast<size_t>(std::max(1, page));
  if (at < st.scroll) st.scroll = at;
  if (at >= st.scroll + p) st.scroll = at + 1 - p;
  if (st.scroll + p > rows.size())
    st.scroll = rows.size() > p ? rows.size() - p : 0;
}

namespace {

void move_selection(FleetViewState& st, const std::vector<FleetRow>& rows,
                    long delta) {
  if (rows.empty()) return;
  long at = 0;
  for (size_t i = 0; i < rows.size(); ++i)
    if (st.selected && rows[i].node->data.node == *st.selected)
      at = static_cast<long>(i);
  at = std::clamp(at + delta, 0L, static_cast<long>(rows.size()) - 1);
  st.selected = rows[static_cast<size_t>(at)].node->data.node;
}

}  // namespace

FleetAction fleet_key(FleetViewState& st, const Key& key,
                      const std::vector<FleetRow>& rows, int page) {
  using K = Key::Kind;
  if (key.kind == K::kInterrupt || key.kind == K::kF10)
    return FleetAction::kQuit;
  if (st.typing) {
    switch (key.kind) {
      case K::kEnter:
        st.filter = *st.typing;
        st.typing.reset();
        st.scroll = 0;
        break;
      case K::kEscape:
        st.typing.reset();
        break;
      case K::kBackspace:
        pop_utf8(*st.typing);
        break;
      case K::kChar:
        if (key.ch >= 0x20 && key.ch != 0x7f && st.typing->size() < 256)
          append_utf8(*st.typing, key.ch);
        break;
      default:
        break;
    }
    return FleetAction::kNone;
  }
  const long p = std::max(1, page);
  if (st.open) {
    switch (key.kind) {
      case K::kEscape:
        st.open.reset();
        return FleetAction::kNone;
      case K::kUp:
      case K::kWheelUp:
        if (st.open_scroll > 0) --st.open_scroll;
        return FleetAction::kNone;
      case K::kDown:
      case K::kWheelDown:
        ++st.open_scroll;
        return FleetAction::kNone;
      case K::kPageUp:
        st.open_scroll -= std::min(st.open_scroll, static_cast<size_t>(p));
        return FleetAction::kNone;
      case K::kPageDown:
        st.open_scroll += static_cast<size_t>(p);
        return FleetAction::kNone;
      case K::kHome:
        st.open_scroll = 0;
        return FleetAction::kNone;
      case K::kChar:
        if (key.ch == 'q') st.open.reset();
        if (key.ch == 'r') return FleetAction::kRefresh;
        return FleetAction::kNone;
      default:
        return FleetAction::kNone;
    }
  }
  switch (key.kind) {
    case K::kUp:
    case K::kWheelUp:
      move_selection(st, rows, -1);
      break;
    case K::kDown:
    case K::kWheelDown:
      move_selection(st, rows, 1);
      break;
    case K::kPageUp:
      move_selection(st, rows, -p);
      break;
    case K::kPageDown:
      move_selection(st, rows, p);
      break;
    case K::kHome:
      move_selection(st, rows, -static_cast<long>(rows.size()));
      break;
    case K::kEnd:
      move_selection(st, rows, static_cast<long>(rows.size()));
      break;
    case K::kEnter:
      if (st.selected) {
        st.open = st.selected;
        st.open_scroll = 0;
      }
      break;
    case K::kMouseClick:
      if (key.y >= 3 && key.y < 3 + p) {
        const size_t i = st.scroll + static_cast<size_t>(key.y - 3);
        if (i < rows.size()) st.selected = rows[i].node->data.node;
      }
      break;
    case K::kEscape:
      st.filter.clear();
      st.scroll = 0;
      break;
    case K::kChar:
      if (key.ch == 'q') return FleetAction::kQuit;
      if (key.ch == 'r') return FleetAction::kRefresh;
      if (key.ch == '/') st.typing = st.filter;
      break;
    default:
      break;
  }
  return FleetAction::kNone;
}

}  // namespace gd::top
