#include "views/top/keys.h"

#include <fmt/format.h>

#include <algorithm>

#include "views/top/typed_text.h"

namespace gd::top {
namespace {

constexpr double kMessageSeconds = 4;

void say(TopState& st, const KeyContext& ctx, std::string text) {
  st.message = std::move(text);
  st.message_until = ctx.now + kMessageSeconds;
}

std::optional<size_t> selected_index(const TopState& st,
                                     const std::vector<ProcRow>& rows) {
  if (!st.selected) return std::nullopt;
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i].key == *st.selected) return i;
  return std::nullopt;
}

void select_index(TopState& st, const std::vector<ProcRow>& rows, long i,
                  int page) {
  if (rows.empty()) {
    st.selected.reset();
    return;
  }
  i = std::clamp<long>(i, 0, static_cast<long>(rows.size()) - 1);
  st.selected = rows[static_cast<size_t>(i)].key;
  settle_selection(st, rows, page);
}

Action typing_key(TopState& st, const Key& key) {
  std::string& t = *st.typing;
  switch (key.kind) {
    case Key::Kind::kEnter:
      st.text_filter = t;
      st.typing.reset();
      st.scroll = 0;
      break;
    case Key::Kind::kEscape:
    case Key::Kind::kInterrupt:
      st.typing.reset();
      break;
    case Key::Kind::kBackspace:
      pop_utf8(t);
      break;
    case Key::Kind::kChar:
      // Printable only; a filter of 256 characters is plenty.
      if (key.ch >= 0x20 && key.ch != 0x7f && t.size() < 256)
        append_utf8(t, key.ch);
      break;
    default:
      break;
  }
  return {};
}

Action overlay_key(TopState& st, const Key& key, const KeyContext& ctx) {
  const bool kill = st.overlay == Overlay::kKill;
  switch (key.kind) {
    case Key::Kind::kUp:
    case Key::Kind::kWheelUp:
      if (st.overlay_scroll > 0) --st.overlay_scroll;
      return {};
    case Key::Kind::kDown:
    case Key::Kind::kWheelDown:
      ++st.overlay_scroll;
      return {};
    case Key::Kind::kPageUp:
      st.overlay_scroll -=
          std::min<size_t>(st.overlay_scroll, static_cast<size_t>(ctx.page));
      return {};
    case Key::Kind::kPageDown:
      st.overlay_scroll += static_cast<size_t>(ctx.page);
      return {};
    case Key::Kind::kHome:
      st.overlay_scroll = 0;
      return {};
    case Key::Kind::kInterrupt:
      if (!kill || !ctx.kill_running) return {Action::Kind::kQuit};
      break;
    case Key::Kind::kChar:
      if (kill && (key.ch == 'y' || key.ch == 'Y'))
        return {Action::Kind::kConfirmKill};
      if (kill && (key.ch == 'f' || key.ch == 'F'))
        return {Action::Kind::kConfirmKillForce};
      if (key.ch == 'q' && !kill) {
        st.overlay = Overlay::kNone;
        return {};
      }
      break;
    default:
      break;
  }
  if (kill && ctx.kill_running) {
    say(st, ctx, "the kill is under way: its result follows");
    return {};
  }
  // Any other key closes (in the kill dialog: a no).
  st.overlay = Overlay::kNone;
  st.overlay_scroll = 0;
  return kill ? Action{Action::Kind::kCloseKill} : Action{};
}

void cycle_sort(TopState& st, int step) {
  int c = (static_cast<int>(st.sort) + step + static_cast<int>(kColumnCount)) %
          static_cast<int>(kColumnCount);
  st.sort = static_cast<Column>(c);
  st.reverse = false;
}

Action mouse_click(TopState& st, const Key& key, const KeyContext& ctx) {
  if (!ctx.screen) return {};
  for (const Hit& h : ctx.screen->hits) {
    if (h.y != key.y || key.x < h.x0 || key.x >= h.x1) continue;
    switch (h.kind) {
      case Hit::Kind::kProcessRow:
        st.focus = Focus::kProcesses;
        if (h.index < ctx.rows->size()) st.selected = (*ctx.rows)[h.index].key;
        return {};
      case Hit::Kind::kFinding:
        st.focus = Focus::kFindings;
        st.finding = h.index;
        st.overlay = Overlay::kFinding;
        st.overlay_scroll = 0;
        return {};
      case Hit::Kind::kColumn: {
        Column c = static_cast<Column>(h.index);
        if (st.sort == c)
          st.reverse = !st.reverse;
        else
          st.sort = c, st.reverse = false;
        return {};
      }
    }
  }
  return {};
}

}  // namespace

void settle_selection(TopState& st, const std::vector<ProcRow>& rows,
                      int page) {
  if (rows.empty()) {
    st.scroll = 0;
    return;
  }
  auto i = selected_index(st, rows);
  if (!i) {
    // The selected process is gone (or filtered out): the nearest row.
    i = std::min(st.scroll, rows.size() - 1);
    st.selected = rows[*i].key;
  }
  const size_t p = static_cast<size_t>(std::max(1, page));
  if (*i < st.scroll) st.scroll = *i;
  if (*i >= st.scroll + p) st.scroll = *i - p + 1;
  if (st.scroll + p > rows.size())
    st.scroll = rows.size() > p ? rows.size() - p : 0;
}

Action handle_key(TopState& st, const Key& key, const KeyContext& ctx) {
  if (st.typing) return typing_key(st, key);
  if (st.overlay != Overlay::kNone) return overlay_key(st, key, ctx);
  const auto& rows = *ctx.rows;
  const long cur = static_cast<long>(selected_index(st, rows).value_or(0));
  const bool findings = st.focus == Focus::kFindings;
  auto move = [&](long by) {
    if (findings) {
      if (ctx.findings == 0) return;
      long f = std::clamp<long>(static_cast<long>(st.finding) + by, 0,
                                static_cast<long>(ctx.findings) - 1);
      st.finding = static_cast<size_t>(f);
    } else {
      select_index(st, rows, cur + by, ctx.page);
    }
  };
  switch (key.kind) {
    case Key::Kind::kUp:
    case Key::Kind::kWheelUp:
      move(-1);
      return {};
    case Key::Kind::kDown:
    case Key::Kind::kWheelDown:
      move(1);
      return {};
    case Key::Kind::kPageUp:
      move(-ctx.page);
      return {};
    case Key::Kind::kPageDown:
      move(ctx.page);
      return {};
    case Key::Kind::kHome:
      move(-static_cast<long>(rows.size() + ctx.findings));
      return {};
    case Key::Kind::kEnd:
      move(static_cast<long>(rows.size() + ctx.findings));
      return {};
    case Key::Kind::kLeft:
      if (st.replay) return {Action::Kind::kReplayBack};
      return {};
    case Key::Kind::kRight:
      if (st.replay) return {Action::Kind::kReplayForward};
      return {};
    case Key::Kind::kTab:
    case Key::Kind::kBackTab:
      if (findings || ctx.findings > 0)
        st.focus = findings ? Focus::kProcesses : Focus::kFindings;
      else
        say(st, ctx, "no findings to select");
      return {};
    case Key::Kind::kEnter:
      if (findings) {
        if (ctx.findings > 0) st.overlay = Overlay::kFinding;
      } else if (st.selected) {
        st.details_of = st.selected;
        st.overlay = Overlay::kDetails;
      }
      st.overlay_scroll = 0;
      return {};
    case Key::Kind::kEscape:
      st.text_filter.clear();
      st.user_filter.reset();
      st.gpu_filter.reset();
      st.tagged.clear();
      st.focus = Focus::kProcesses;
      say(st, ctx, "filters and tags cleared");
      return {};
    case Key::Kind::kF1:
      st.overlay = Overlay::kHelp;
      st.overlay_scroll = 0;
      return {};
    case Key::Kind::kF10:
    case Key::Kind::kInterrupt:
      return {Action::Kind::kQuit};
    case Key::Kind::kMouseClick:
      return mouse_click(st, key, ctx);
    case Key::Kind::kBackspace:
    case Key::Kind::kChar:
      break;
  }
  if (key.kind != Key::Kind::kChar) return {};
  switch (key.ch) {
    case 'q':
    case 'Q':
      return {Action::Kind::kQuit};
    case 'h':
    case '?':
      st.overlay = Overlay::kHelp;
      st.overlay_scroll = 0;
      return {};
    case 's':
    case '>':
    case '.':
      cycle_sort(st, 1);
      say(st, ctx, fmt::format("sorted by {}", column_title(st.sort)));
      return {};
    case '<':
    case ',':
      cycle_sort(st, -1);
      say(st, ctx, fmt::format("sorted by {}", column_title(st.sort)));
      return {};
    case 'r':
    case 'I':
      st.reverse = !st.reverse;
      return {};
    case 't':
    case 'T':
      st.tree = !st.tree;
      say(st, ctx,
          st.tree ? "tree: each worker on its own row"
                  : "folded: workers counted in their GPU process");
      return {};
    case '/':
      st.typing = st.text_filter;
      return {};
    case '\\':
      st.text_filter.clear();
      return {};
    case 'u': {
      if (ctx.users.empty()) {
        say(st, ctx, "no users to filter by");
        return {};
      }
      auto it = st.user_filter ? std::find(ctx.users.begin(), ctx.users.end(),
                                           *st.user_filter)
                               : ctx.users.end();
      if (!st.user_filter)
        st.user_filter = ctx.users.front();
      else if (it == ctx.users.end() || it + 1 == ctx.users.end())
        st.user_filter.reset();
      else
        st.user_filter = *(it + 1);
      st.scroll = 0;
      say(st, ctx,
          st.user_filter ? "user filter: " + *st.user_filter
                         : "user filter off");
      return {};
    }
    case 'g': {
      if (ctx.gpus.empty()) return {};
      auto it = st.gpu_filter ? std::find(ctx.gpus.begin(), ctx.gpus.end(),
                                          *st.gpu_filter)
                              : ctx.gpus.end();
      if (!st.gpu_filter)
        st.gpu_filter = ctx.gpus.front();
      else if (it == ctx.gpus.end() || it + 1 == ctx.gpus.end())
        st.gpu_filter.reset();
      else
        st.gpu_filter = *(it + 1);
      st.scroll = 0;
      say(st, ctx,
          st.gpu_filter ? fmt::format("GPU filter: {}", *st.gpu_filter)
                        : "GPU filter off");
      return {};
    }
    case ' ':
      if (st.replay) return {Action::Kind::kReplayPause};
      if (st.selected && !findings) {
        uint32_t pid = st.selected->pid;
        if (!st.tagged.erase(pid)) st.tagged.insert(pid);
        move(1);
      }
      return {};
    case '+':
    case '=':
      if (st.replay) return {Action::Kind::kReplayFaster};
      return {};
    case '-':
    case '_':
      if (st.replay) return {Action::Kind::kReplaySlower};
      return {};
    case 'c':
      st.charts = static_cast<ChartSet>((static_cast<size_t>(st.charts) + 1) %
                                        kChartSetCount);
      say(st, ctx, std::string("charts: ") + chart_set_name(st.charts));
      return {};
    case 'd':
      if (findings && ctx.findings > 0) {
        st.overlay = Overlay::kFinding;
      } else if (st.selected) {
        st.details_of = st.selected;
        st.overlay = Overlay::kDetails;
      } else {
        say(st, ctx, "no process selected");
        return {};
      }
      st.overlay_scroll = 0;
      return {};
    case 'w': {
      // The GPU of the selected process (a worker: of its GPU process).
      int gpu = -1;
      if (auto i = selected_index(st, rows)) {
        const ProcRow& r = rows[*i];
        gpu = r.key.gpu;
        if (gpu < 0)
          for (const auto& o : rows)
            if (o.key.pid == r.owner && o.depth == 0) gpu = o.key.gpu;
      }
      if (gpu < 0)
        gpu = st.gpu_filter.value_or(ctx.gpus.empty() ? -1 : ctx.gpus.front());
      if (gpu < 0) {
        say(st, ctx, "no GPU to account for");
        return {};
      }
      st.who_gpu = gpu;
      st.overlay = Overlay::kWho;
      st.overlay_scroll = 0;
      return {Action::Kind::kWho, {}, gpu};
    }
    case 'k':
    case 'K': {
      if (st.readonly) {
        say(st, ctx, "read-only: " + st.readonly_reason);
        return {};
      }
      std::vector<uint32_t> pids(st.tagged.begin(), st.tagged.end());
      if (pids.empty() && st.selected) pids.push_back(st.selected->pid);
      if (pids.empty()) {
        say(st, ctx, "select a process (arrows) or tag some (Space) first");
        return {};
      }
      st.overlay = Overlay::kKill;
      st.overlay_scroll = 0;
      return {Action::Kind::kKill, pids};
    }
    default:
      return {};
  }
}

}  // namespace gd::top
