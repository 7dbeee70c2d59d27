#include "views/top/layout.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/bytes_text.h"
#include "common/elapsed_text.h"
#include "common/time_point.h"
#include "model/process_budget.h"
#include "views/top/parts.h"

namespace gd::top {
namespace {

using monitor::Frame;
using monitor::SourceKind;

// The table's columns in order, with their widths; COMMAND takes the rest.
struct ColumnPlan {
  Column column;
  int width;
  bool right;
};

std::vector<ColumnPlan> visible_columns(int width) {
  std::vector<ColumnPlan> cols = {
      {Column::kGpu, 3, true},     {Column::kPid, 7, true},
      {Column::kUser, 8, false},   {Column::kGpuMem, 9, true},
      {Column::kSm, 4, true},      {Column::kCpu, 6, true},
      {Column::kRss, 9, true},     {Column::kState, 1, false},
      {Column::kTime, 6, true},    {Column::kContainer, 18, false},
      {Column::kCommand, 0, false}};
  // Narrow terminals lose the container, then SM% (n/a on drivers that do
  // not report it), before COMMAND gets too short to read.
  if (width < 110)
    std::erase_if(cols, [](const ColumnPlan& c) {
      return c.column == Column::kContainer;
    });
  if (width < 90)
    std::erase_if(cols,
                  [](const ColumnPlan& c) { return c.column == Column::kSm; });
  return cols;
}

std::string header_title(const LayoutInput& in) {
  const Frame& f = *in.frame;
  const TraceHeader& h = *f.header;
  std::string out = "gpudoctor top";
  if (!h.host.hostname.empty()) out += " — " + h.host.hostname;
  if (h.driver) {
    if (!h.driver->driver_version.empty())
      out += "  driver " + h.driver->driver_version;
    if (!h.driver->cuda_driver_version.empty())
      out += "  CUDA " + h.driver->cuda_driver_version;
  } else if (h.nvml_status != kNvmlOk && f.kind != SourceKind::kRemote) {
    out += "  no NVML (" + h.nvml_status + ")";
  }
  if (f.sample)
    out += "  " + clock_text(f.sample->t, f.kind == SourceKind::kReplay);
  return out;
}

std::string source_text(const LayoutInput& in) {
  const Frame& f = *in.frame;
  switch (f.kind) {
    case SourceKind::kLive:
      return f.interval_s < 1
                 ? fmt::format("live {:.0f}ms", f.interval_s * 1000)
                 : fmt::format("live {:g}s", f.interval_s);
    case SourceKind::kRemote:
      return "remote " + f.source_name;
    case SourceKind::kReplay: {
      const auto& r = *f.replay;
      std::string speed = r.speed >= 1 ? fmt::format("x{:g}", r.speed)
                                       : fmt::format("x1/{:g}", 1 / r.speed);
      return fmt::format("replay {} +{}",
                         r.ended    ? "END"
                         : r.paused ? "PAUSED " + speed
                                    : speed,
                         elapsed_compact(r.position_t - r.start_t));
    }
  }
  return "";
}

Line header_line(const LayoutInput& in, int width) {
  LineBuilder b(width);
  std::string right = "[" + source_text(in) + "]";
  if (in.state->readonly) right = "[read-only] " + right;
  int right_w = columns_of(right);
  b.cell(header_title(in), std::max(0, width - right_w - 1), Style::kTitle);
  b.add(" ", Style::kTitle);
  b.add(right, Style::kTitle);
  return b.done(Style::kTitle);
}

int findings_lines_wanted(const LayoutInput& in, int height) {
  const auto* fs = in.frame->findings.get();
  int n = fs ? static_cast<int>(fs->findings.size()) : 0;
  int cap = height >= 40 ? 5 : height >= 30 ? 3 : 2;
  return std::clamp(n, 1, cap);
}

void add_findings(std::vector<Line>& out, std::vector<Hit>& hits,
                  const LayoutInput& in, int width, int lines) {
  const auto* fs = in.frame->findings.get();
  const int y0 = static_cast<int>(out.size());
  if (!fs) {
    LineBuilder b(width);
    b.add("  diagnosis: waiting for samples", Style::kDim);
    out.push_back(b.done());
    return;
  }
  if (!fs->error.empty() && fs->findings.empty()) {
    LineBuilder b(width);
    b.add("  diagnosis failed: " + fs->error, Style::kWarn);
    out.push_back(b.done());
    return;
  }
  if (fs->findings.empty() && !fs->not_judged.empty()) {
    // Nothing found is not "all is well" while rules could not judge.
    LineBuilder b(width);
    std::string ids;
    for (const NotJudged& n : fs->not_judged)
      ids += (ids.empty() ? "" : ", ") + n.id;
    b.add(fmt::format("  no findings — {}; not judged ({}): {}", fs->source,
                      fs->not_judged.size(), ids),
          Style::kDim);
    out.push_back(b.done());
    return;
  }
  if (fs->findings.empty()) {
    LineBuilder b(width);
    b.add(in.unicode ? "  ✓ " : "  ok ", Style::kGood);
    std::string what = "no findings — " + fs->source;
    if (fs->rules_checked)
      what += fmt::format(" ({} rules, {} samples)", fs->rules_checked,
                          fs->window.samples);
    b.add(what, Style::kDim);
    out.push_back(b.done());
    return;
  }
  const size_t n = fs->findings.size();
  const size_t shown = std::min(n, static_cast<size_t>(lines));
  // Keep the selected finding in view.
  size_t first = 0;
  if (in.state->finding >= shown) first = in.state->finding - shown + 1;
  if (first + shown > n) first = n - shown;
  const bool focused = in.state->focus == Focus::kFindings;
  for (size_t k = 0; k < shown; ++k) {
    size_t i = first + k;
    const Finding& f = fs->findings[i];
    bool sel = focused && i == in.state->finding;
    LineBuilder b(width);
    Style sev = sel ? Style::kSelected : severity_style(f.severity);
    b.add(sel ? "> " : "  ", sel ? Style::kSelected : Style::kNormal);
    b.cell(severity_word(f.severity), 5, sev);
    b.cell(f.id, 22, sel ? Style::kSelected : Style::kBold);
    std::string title = f.title;
    // The last visible line says how many more there are.
    if (k + 1 == shown && first + shown < n)
      title = fmt::format("(+{} more: Tab, then arrows) ", n - first - shown) +
              title;
    b.add(title, sel ? Style::kSelected : Style::kNormal);
    out.push_back(b.done(sel ? Style::kSelected : Style::kNormal));
    hits.push_back(
        {Hit::Kind::kFinding, y0 + static_cast<int>(k), 0, width, i});
  }
}

std::string mem_cell(std::optional<uint64_t> v) {
  return v ? human_bytes_brief(*v) : "";
}

std::string tree_prefix(const ProcRow& r, bool unicode) {
  if (r.depth == 0) return "";
  std::string p;
  for (int d = 1; d < r.depth; ++d) p += "  ";
  if (unicode)
    p += r.last_sibling ? "└─ " : "├─ ";
  else
    p += r.last_sibling ? "`- " : "|- ";
  return p;
}

Line table_heading(const LayoutInput& in, int width,
                   const std::vector<ColumnPlan>& cols, std::vector<Hit>& hits,
                   int y) {
  LineBuilder b(width);
  b.add("  ", Style::kHeading);
  for (size_t i = 0; i < cols.size(); ++i) {
    const ColumnPlan& c = cols[i];
    bool sorted = c.column == in.state->sort;
    std::string title = column_title(c.column);
    if (sorted) {
      bool desc = column_descending_by_default(c.column) != in.state->reverse;
      title += in.unicode ? (desc ? "▼" : "▲") : (desc ? "v" : "^");
    }
    int x0 = b.used();
    Style s = sorted ? Style::kSorted : Style::kHeading;
    if (c.width == 0)
      b.add(title, s);
    else
      b.cell(title, std::max(c.width, columns_of(title)), s, c.right);
    hits.push_back(
        {Hit::Kind::kColumn, y, x0, b.used(), static_cast<size_t>(c.column)});
    if (i + 1 < cols.size()) b.add(" ", Style::kHeading);
  }
  return b.done(Style::kHeading);
}

Line table_row(const LayoutInput& in, const ProcRow& r, int width,
               const std::vector<ColumnPlan>& cols, bool selected) {
  const TopState& st = *in.state;
  const double now = in.frame->sample ? in.frame->sample->t : 0;
  bool tagged = st.tagged.count(r.key.pid) > 0;
  Style base = selected                ? Style::kSelected
               : tagged                ? Style::kTagged
               : r.missing || r.zombie ? Style::kCrit
               : r.depth > 0           ? Style::kDim
                                       : Style::kNormal;
  auto sty = [&](Style s) {
    return selected || tagged || r.missing || r.zombie ? base : s;
  };
  LineBuilder b(width);
  b.add(tagged ? "*" : r.missing || r.zombie ? "!" : " ", base);
  b.add(" ", base);
  for (size_t i = 0; i < cols.size(); ++i) {
    const ColumnPlan& c = cols[i];
    std::string text;
    Style s = base;
    switch (c.column) {
      case Column::kGpu:
        text = r.depth == 0 ? std::to_string(r.key.gpu) : "";
        break;
      case Column::kPid:
        text = std::to_string(r.key.pid);
        break;
      case Column::kUser:
        text = row_user(r);
        break;
      case Column::kGpuMem:
        text = mem_cell(r.gpu_mem);
        break;
      case Column::kSm:
        // Workers have no GPU context of their own: blank, not n/a.
        if (r.depth == 0)
          text = r.sm_pct ? fmt::format("{:.0f}", *r.sm_pct) : "n/a";
        if (!r.sm_pct) s = sty(Style::kDim);
        break;
      case Column::kCpu:
        text = r.cpu_pct ? fmt::format("{:.1f}", *r.cpu_pct) : "n/a";
        if (r.cpu_pct && *r.cpu_pct >= 90) s = sty(Style::kWarn);
        break;
      case Column::kRss:
        text = r.proc && r.proc->rss_bytes ? mem_cell(r.proc->rss_bytes) : "";
        break;
      case Column::kState:
        text = r.missing ? "-" : row_state(r).substr(0, 1);
        if (!r.missing && text == "D") s = sty(Style::kWarn);
        break;
      case Column::kTime: {
        auto e = row_elapsed(r, now);
        text = e ? elapsed_compact(*e) : "";
        break;
      }
      case Column::kContainer:
        text = row_container(r);
        if (text.empty()) text = "-";
        break;
      case Column::kCommand: {
        if (r.missing) {
          text = "(no such process: memory orphaned)";
        } else {
          b.add(tree_prefix(r, in.unicode), sty(Style::kDim));
          if (r.depth == 0 && r.workers > 0 && !st.tree)
            b.add(fmt::format("+{} ", r.workers), sty(Style::kDim));
          text = row_command(r);
          if (r.zombie) text += " <zombie: its parent has not reaped it>";
          if (r.other_ns && r.proc && r.proc->ns_pid)
            text = fmt::format("[pid {} in its namespace] ", *r.proc->ns_pid) +
                   text;
        }
        break;
      }
    }
    if (c.width == 0)
      b.add(text, s);
    else
      b.cell(text, c.width, s, c.right);
    if (i + 1 < cols.size()) b.add(" ", base);
  }
  return b.done(base);
}

// The footer: what is being typed, a message, or the keys.
Line footer_line(const LayoutInput& in, int width) {
  const TopState& st = *in.state;
  LineBuilder b(width);
  if (st.typing) {
    b.add("Filter: ", Style::kKey);
    b.add(*st.typing + "_");
    b.add("   Enter apply  Esc cancel", Style::kDim);
    return b.done();
  }
  if (!st.message.empty() && in.now < st.message_until) {
    b.add(st.message, Style::kWarn);
    return b.done();
  }
  std::vector<std::pair<std::string, std::string>> keys;
  if (st.overlay != Overlay::kNone) {
    keys = {{"Esc", "close"}, {"↑↓", "scroll"}};
    if (st.overlay == Overlay::kKill) keys.insert(keys.begin(), {"y", "yes"});
  } else {
    keys = {{"h", "help"}, {"s", "sort"}, {"r", "rev"}, {"/", "filter"},
            {"u", "user"}, {"g", "gpu"},  {"t", "tree"}};
    if (st.replay) {
      keys.push_back({"Space", "pause"});
      keys.push_back({"+-", "speed"});
      keys.push_back({"←→", "seek"});
    } else {
      keys.push_back({"Space", "tag"});
      if (!st.readonly) keys.push_back({"k", "kill"});
    }
    keys.push_back({"w", "who"});
    keys.push_back({"d", "details"});
    keys.push_back({"c", "charts"});
    keys.push_back({"Tab", "findings"});
    keys.push_back({"q", "quit"});
  }
  for (const auto& [k, what] : keys) {
    std::string key = k;
    if (!in.unicode) {
      if (key == "↑↓") key = "Up/Dn";
      if (key == "←→") key = "Left/Right";
    }
    if (columns_of(key) + columns_of(what) + 2 > b.left()) break;
    b.add(key, Style::kKey);
    b.add(" " + what + " ", Style::kNormal);
  }
  std::string filters;
  if (st.gpu_filter) filters += fmt::format(" gpu={}", *st.gpu_filter);
  if (st.user_filter) filters += " user=" + *st.user_filter;
  if (!st.text_filter.empty()) filters += " /" + st.text_filter;
  if (!st.tagged.empty())
    filters += fmt::format(" tagged={}", st.tagged.size());
  if (!filters.empty() && columns_of(filters) + 2 <= b.left()) {
    b.spaces(b.left() - columns_of(filters));
    b.add(filters, Style::kWarn);
  }
  return b.done();
}

// Lines of each part of the main screen at this size.
struct Plan {
  int findings = 1;
  bool problem = false;
  bool compact_gpus = false;
  size_t gpus_shown = 0;
  int gpu_lines = 0;
  int chart_rows = 0;  // per GPU; 0 = no charts
  int table = 0;       // process rows
};

Plan plan_for(const LayoutInput& in, int width, int height) {
  (void)width;
  Plan p;
  const Frame& f = *in.frame;
  p.problem = !f.problem.empty();
  p.findings = findings_lines_wanted(in, height);
  const int fixed = 1 /*header*/ + 1 /*footer*/ + (p.problem ? 1 : 0) +
                    p.findings + 1 /*host*/ + 1 /*table heading*/;
  const int min_table = std::max(3, height / 4);
  int avail = std::max(0, height - fixed - min_table);
  const auto& gpus = f.header->gpus;
  int full = 0;
  for (const auto& info : gpus) {
    const GpuSample* g = nullptr;
    if (f.sample)
      for (const auto& x : f.sample->gpus)
        if (x.index == info.index) g = &x;
    full += gpu_panel_lines(g, false);
  }
  if (full <= avail) {
    p.gpu_lines = full;
    p.gpus_shown = gpus.size();
  } else {
    p.compact_gpus = true;
    p.gpus_shown = std::min(gpus.size(), static_cast<size_t>(avail));
    p.gpu_lines = static_cast<int>(p.gpus_shown);
  }
  avail -= p.gpu_lines;
  // Charts on tall terminals, at most a third of the height.
  if (!gpus.empty() && height >= 36 && f.history) {
    int budget = std::min(avail, height / 3) - 1;
    int per = budget / static_cast<int>(gpus.size());
    p.chart_rows = std::clamp(per, 0, 3);
    if (p.chart_rows > 0)
      avail -= 1 + p.chart_rows * static_cast<int>(gpus.size());
  }
  p.table = std::max(0, min_table + avail);
  return p;
}

}  // namespace

std::string clock_text(double t, bool with_date) {
  return with_date ? local_text(t) : local_hms(t);
}

int table_rows(const LayoutInput& in, int width, int height) {
  return plan_for(in, width, height).table;
}

Screen layout(const LayoutInput& in, int width, int height) {
  Screen s;
  s.width = width;
  s.height = height;
  if (width <= 0 || height <= 0) return s;
  s.lines.push_back(header_line(in, width));
  if (in.state->overlay != Overlay::kNone) {
    for (auto& l : overlay_lines(in, width)) s.lines.push_back(std::move(l));
  } else {
    Plan p = plan_for(in, width, height);
    if (p.problem) {
      LineBuilder b(width);
      b.add("!! " + in.frame->problem, Style::kCrit);
      s.lines.push_back(b.done());
    }
    add_findings(s.lines, s.hits, in, width, p.findings);
    const auto& gpus = in.frame->header->gpus;
    if (gpus.empty() && in.frame->kind != SourceKind::kRemote) {
      LineBuilder b(width);
      b.add(in.frame->header->nvml_status == kNvmlOk
                ? "no GPUs"
                : "no NVIDIA driver or NVML: showing the host only",
            Style::kWarn);
      s.lines.push_back(b.done());
    }
    for (size_t i = 0; i < p.gpus_shown; ++i)
      add_gpu_panel(s.lines, in, gpus[i], width, p.compact_gpus);
    if (p.gpus_shown < gpus.size() && !s.lines.empty()) {
      // Say so on the last panel line rather than dropping GPUs silently.
      LineBuilder b(width);
      b.add(fmt::format("  ... {} more GPU(s): enlarge the terminal",
                        gpus.size() - p.gpus_shown),
            Style::kWarn);
      s.lines.back() = b.done();
    }
    if (p.chart_rows > 0) add_charts(s.lines, in, width, p.chart_rows);
    add_host_strip(s.lines, in, width);
    add_fabric_strip(s.lines, in, width);
    auto cols = visible_columns(width);
    s.lines.push_back(table_heading(in, width, cols, s.hits,
                                    static_cast<int>(s.lines.size())));
    const auto& rows = *in.rows;
    size_t first = std::min(in.state->scroll, rows.size());
    int room = height - 1 - static_cast<int>(s.lines.size());
    for (size_t i = first; i < rows.size() && room > 0; ++i, --room) {
      bool sel = in.state->focus == Focus::kProcesses && in.state->selected &&
                 *in.state->selected == rows[i].key;
      s.hits.push_back({Hit::Kind::kProcessRow,
                        static_cast<int>(s.lines.size()), 0, width, i});
      s.lines.push_back(table_row(in, rows[i], width, cols, sel));
    }
    const Sample* sample = in.frame->sample.get();
    if (sample && sample->processes_left_out > 0 && s.lines.size() > 1) {
      // Said on the last line, not dropped silently: the table shows what
      // the sample kept (model/process_budget.h).
      LineBuilder b(width);
      b.add(fmt::format("  ... {} more processes left out of this sample "
                        "(a sample keeps {}, GPU processes first)",
                        sample->processes_left_out,
                        ProcessBudget{}.max_processes),
            Style::kWarn);
      if (room > 0) {
        s.lines.push_back(b.done());
        --room;
      } else {
        s.lines.back() = b.done();
      }
    }
    if (rows.empty() && room > 0) {
      LineBuilder b(width);
      bool filtered = in.state->gpu_filter || in.state->user_filter ||
                      !in.state->text_filter.empty();
      b.add(filtered ? "  (no GPU process matches the filter; Esc clears it)"
                     : "  (no GPU processes)",
            Style::kDim);
      s.lines.push_back(b.done());
    }
  }
  while (static_cast<int>(s.lines.size()) < height - 1)
    s.lines.push_back(LineBuilder(width).done());
  s.lines.resize(static_cast<size_t>(height - 1));
  s.lines.push_back(footer_line(in, width));
  std::erase_if(s.hits, [&](const Hit& h) { return h.y >= height - 1; });
  return s;
}

}  // namespace gd::top
