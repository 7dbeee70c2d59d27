// The overlays of `top`: help, a process's or finding's details, who holds
// a GPU, and the kill dialog. Each is a title line and text lines; the
// layout shows them from overlay_scroll on.
#include <fmt/format.h>

#include <algorithm>

#include "common/bytes_text.h"
#include "common/container_ref.h"
#include "common/cuda_version.h"
#include "common/elapsed_text.h"
#include "common/terminal_text.h"
#include "model/pod_label.h"
#include "model/slurm_label.h"
#include "procmgmt/kill_signal.h"
#include "views/kill_view.h"
#include "views/top/parts.h"
#include "views/who_render.h"

namespace gd::top {
namespace {

// One line of an overlay's body, as long as it is: overlay_lines wraps it
// to the screen, continuation lines indented by `hang` columns (-1: by its
// leading spaces and a "- " or "-> " mark after them), so that no word of
// it is lost (a command to copy stays whole).
struct Text {
  std::string text;
  Style style = Style::kNormal;
  int hang = -1;
};

void add_lines(std::vector<Text>& out, const std::string& block,
               Style style = Style::kNormal) {
  size_t start = 0;
  while (start < block.size()) {
    size_t nl = block.find('\n', start);
    if (nl == std::string::npos) nl = block.size();
    out.push_back({block.substr(start, nl - start), style});
    start = nl + 1;
  }
}

// `text` after `label` (plain ASCII), wrapped under the text.
void add_wrapped(std::vector<Text>& out, const std::string& label,
                 const std::string& text, Style style) {
  out.push_back({label + text, style, static_cast<int>(label.size())});
}

// Where a line's continuation starts: after its leading spaces and a list
// mark ("- ", "-> ") that follows them.
int default_hang(const std::string& text) {
  size_t n = text.find_first_not_of(' ');
  if (n == std::string::npos) return 0;
  for (std::string_view mark : {"-> ", "- "})
    if (text.compare(n, mark.size(), mark) == 0)
      return static_cast<int>(n + mark.size());
  return static_cast<int>(n);
}

// `t` in lines of at most `width` columns: the first `hang` columns (a
// label or an indent) stay on the first line, the rest is wrapped beside
// them.
std::vector<Text> reflow(const Text& t, int width) {
  if (columns_of(t.text) <= width) return {t};
  int hang = t.hang >= 0 ? t.hang : default_hang(t.text);
  // A hang past half the screen leaves too little room: indent less.
  if (hang > width / 2) hang = std::min(default_hang(t.text), width / 4);
  hang = std::min<int>(hang, static_cast<int>(t.text.size()));
  const std::string head = t.text.substr(0, hang);
  std::vector<Text> out;
  for (const std::string& line : wrap_text(t.text.substr(hang), width - hang))
    out.push_back(
        {(out.empty() ? head : std::string(hang, ' ')) + line, t.style, hang});
  return out;
}

std::vector<Text> help_text(const LayoutInput& in) {
  std::vector<Text> t;
  auto key = [&](const char* k, std::string_view what) {
    t.push_back({fmt::format("  {:<14} {}", k, what), Style::kNormal, 17});
  };
  t.push_back({"Keys", Style::kBold});
  key("Up/Down PgUp/Dn",
      "select a process (or a finding after Tab); mouse: click a row");
  key("Home/End", "first / last process");
  key("s  >  <", "sort by the next / previous column (click a heading too)");
  key("r", "reverse the sort");
  key("/", "filter by text (command, user or pid); Esc clears every filter");
  key("u", "filter by user: cycles through the users of GPU processes");
  key("g", "filter by GPU: cycles through the GPUs");
  key("t", "tree: show each data-loader worker under its GPU process");
  key("Space", in.state->replay
                   ? "pause / resume the replay"
                   : "tag the process (k then ends every tagged one)");
  const bool remote =
      in.frame && in.frame->kind == monitor::SourceKind::kRemote;
  key("k", std::string("kill the tagged processes, or the selected one: "
                       "SIGTERM, then SIGKILL after 10 s; the same checks as "
                       "`gpudoctor kill`, asked first, and whether the GPU "
                       "memory was freed") +
               (remote ? "; done by the node's serve (it needs "
                         "--allow-remote-kill)"
                       : ""));
  key("w", "who holds the selected process's GPU memory (`gpudoctor who`)");
  key("d  Enter", "details of the selected process, or of the finding");
  key("Tab", "move between the process table and the findings strip");
  key("c", "charts: util/memory, temperature/power, clocks, PCIe");
  if (in.state->replay) {
    key("+  -", "replay faster / slower (1/16x .. 64x)");
    key("Left/Right", "seek 10 s back / forward");
  }
  key("h  ?  F1", "this help");
  key("q  Ctrl-C  F10", "quit");
  t.push_back({""});
  t.push_back({"Colours and marks", Style::kBold});
  t.push_back(
      {"  temperature: green 15 C or more below the slowdown limit, "
       "yellow 5-15 C, red under 5 C"});
  t.push_back(
      {"  power: yellow from 95% of the limit, red at the limit; "
       "memory: red from 95% used"});
  t.push_back(
      {"  MEM bar: | memory of live processes, # memory held by no "
       "live process (owner gone or a zombie)"});
  t.push_back(
      {"  ! a process whose owner is gone or a zombie; * tagged; a "
       "stale GPU (no answer within the deadline) is greyed"});
  t.push_back(
      {"  CPU% of a folded row includes its workers (+N); t shows "
       "each on its own row"});
  t.push_back({""});
  const auto* fs = in.frame->findings.get();
  t.push_back({"Findings: " + (fs ? fs->source : std::string("none yet")) +
                   " (the rules of `gpudoctor diagnose`)",
               Style::kDim});
  if (in.state->readonly)
    t.push_back({"Read-only: " + in.state->readonly_reason, Style::kDim});
  t.push_back({"Colour: set NO_COLOR (or --mono) for a monochrome screen",
               Style::kDim});
  return t;
}

const ProcRow* find_row(const LayoutInput& in, const RowKey& key) {
  for (const auto& r : *in.rows)
    if (r.key == key) return &r;
  return nullptr;
}

const ProcessSample* find_process(const Sample* s, uint32_t pid) {
  if (!s) return nullptr;
  for (const auto& p : s->processes)
    if (p.pid == pid) return &p;
  return nullptr;
}

std::vector<Text> details_text(const LayoutInput& in) {
  std::vector<Text> t;
  const TopState& st = *in.state;
  const Sample* s = in.frame->sample.get();
  if (!st.details_of || !s) {
    t.push_back({"no process selected"});
    return t;
  }
  const uint32_t pid = st.details_of->pid;
  const ProcessSample* p = find_process(s, pid);
  const ProcRow* row = find_row(in, *st.details_of);
  if (!p || p->state == "missing") {
    t.push_back({fmt::format("PID {}: not in /proc", pid), Style::kCrit});
    add_wrapped(t, "  ",
                "NVML lists this pid, but no process has it: its owner is "
                "gone and the driver still holds its memory (orphaned), or it "
                "runs in a PID namespace NVML does not translate. `w` shows "
                "who holds the GPU and what to do.",
                Style::kNormal);
  } else {
    t.push_back({fmt::format("PID {}  {}", pid, p->name), Style::kBold});
    t.push_back(
        {fmt::format("  user {}  state {}  ppid {}  threads {}", p->user,
                     p->state, p->ppid ? std::to_string(*p->ppid) : "?",
                     p->threads ? std::to_string(*p->threads) : "?")});
    t.push_back({fmt::format(
        "  CPU {}  RSS {}  elapsed {}",
        p->cpu_pct ? fmt::format("{:.1f}%", *p->cpu_pct) : "n/a",
        p->rss_bytes ? human_bytes(*p->rss_bytes) : "n/a",
        p->start_time ? elapsed_words(s->t - *p->start_time) : "n/a")});
    if (p->state == "Z")
      add_wrapped(t, "  ",
                  fmt::format("ZOMBIE: it exited, but its parent {} has not "
                              "reaped it; its GPU memory is freed when the "
                              "parent reaps it or exits (end the parent: k on "
                              "pid {})",
                              p->ppid ? std::to_string(*p->ppid) : "?",
                              p->ppid ? std::to_string(*p->ppid) : "?"),
                  Style::kCrit);
    if (p->ns_pid && *p->ns_pid != pid)
      t.push_back(
          {fmt::format("  pid {} in its own PID namespace", *p->ns_pid)});
    ContainerRef c = container_from_cgroup(p->cgroup);
    if (!c.empty()) t.push_back({"  container: " + c.describe()});
    if (p->slurm_job_id)
      add_wrapped(t, "  job: ", slurm_job_label(*s, *p->slurm_job_id),
                  Style::kNormal);
    if (p->pod)
      add_wrapped(
          t, "  pod: ", pod_label(p->pod),
          p->pod->deleted.value_or(false) ? Style::kWarn : Style::kNormal);
    if (p->cgroup) add_wrapped(t, "  cgroup: ", *p->cgroup, Style::kDim);
    std::string cuda = cuda_runtime_version(p->libs);
    if (!cuda.empty()) t.push_back({"  CUDA runtime " + cuda});
    if (p->dev_shm_bytes)
      t.push_back({"  /dev/shm " + human_bytes(*p->dev_shm_bytes)});
  }
  for (const auto& g : s->gpus)
    if (g.processes)
      for (const auto& gp : *g.processes)
        if (gp.pid == pid)
          t.push_back({fmt::format(
              "  GPU {}: {} ({})", g.index,
              gp.used_bytes ? human_bytes(*gp.used_bytes) : "n/a", gp.type)});
  if (row && row->depth == 0 && row->workers > 0) {
    std::string pids;
    size_t n = 0;
    for (const auto& q : s->processes)
      if (q.ppid && *q.ppid == pid && n++ < 32)
        pids += std::to_string(q.pid) + " ";
    t.push_back(
        {fmt::format("  workers: {} (children: {})", row->workers, pids)});
  } else if (row && row->depth > 0) {
    t.push_back({fmt::format("  worker of GPU process {}", row->owner)});
  }
  if (p && p->state != "missing") {
    t.push_back({"  command line:"});
    add_wrapped(t, "    ",
                p->cmdline.empty() ? "[" + p->name + "]" : p->cmdline,
                Style::kNormal);
  }
  return t;
}

std::vector<Text> finding_text(const LayoutInput& in) {
  std::vector<Text> t;
  const auto* fs = in.frame->findings.get();
  if (!fs || in.state->finding >= fs->findings.size()) {
    t.push_back({"no finding selected"});
    return t;
  }
  const Finding& f = fs->findings[in.state->finding];
  t.push_back({fmt::format("{}  {}", severity_word(f.severity), f.id),
               severity_style(f.severity)});
  add_wrapped(t, "", f.title, Style::kBold);
  std::string scope;
  if (!f.gpus.empty()) {
    scope = "GPU";
    for (int g : f.gpus) scope += " " + std::to_string(g);
  } else {
    scope = "host";
  }
  if (!f.pids.empty()) {
    scope += "  pids";
    for (size_t i = 0; i < f.pids.size() && i < 16; ++i)
      scope += " " + std::to_string(f.pids[i]);
  }
  if (f.start > 0)
    scope += "  " + clock_text(f.start, false) + "-" + clock_text(f.end, false);
  t.push_back({scope, Style::kDim});
  t.push_back({""});
  add_wrapped(t, "evidence: ", f.evidence, Style::kNormal);
  t.push_back({""});
  add_wrapped(t, "action:   ", f.action, Style::kGood);
  t.push_back({""});
  t.push_back({"From " + fs->source +
                   "; `gpudoctor diagnose` explains the "
                   "same finding.",
               Style::kDim});
  return t;
}

std::vector<Text> kill_text(const LayoutInput& in) {
  std::vector<Text> t;
  const monitor::KillJob* job = in.kill;
  if (!job) {
    t.push_back({"no kill in progress"});
    return t;
  }
  using Stage = monitor::KillJob::Stage;
  const Stage stage = job->stage();
  const std::string where = job->where();
  if (!where.empty())
    t.push_back(
        {"On the node of " + where + ", by its gpudoctor serve:", Style::kDim});
  if (stage == Stage::kPlanning) {
    std::string pids;
    for (uint32_t p : job->pids()) pids += " " + std::to_string(p);
    t.push_back(
        {(where.empty() ? "Planning the kill of" : "Asking for the plan of") +
         pids + " ..."});
    return t;
  }
  if (stage == Stage::kFailed && job->steps().empty() &&
      job->plan().targets.empty()) {
    t.push_back({"kill failed: " + job->error(), Style::kCrit});
    return t;
  }
  const auto& plan = job->plan();
  const auto& o = job->options();
  for (uint32_t pid : plan.not_found)
    t.push_back({fmt::format("pid {}: no such process", pid), Style::kCrit});
  add_lines(
      t, render_kill_plan(plan, job->before(), procmgmt::signal_name(o.signal),
                          o.force, o.timeout_s));
  if (!plan.refusals.empty()) {
    add_lines(t, render_kill_refusals(plan, job->procs()), Style::kCrit);
    t.push_back({"Esc: close", Style::kDim});
    return t;
  }
  if (!job->can_proceed()) {
    t.push_back(
        {plan.not_found.empty() ? "Nothing to signal." : "Nothing was sent.",
         Style::kWarn});
    return t;
  }
  if (stage == Stage::kPlanned) {
    t.push_back({""});
    // As `gpudoctor kill`: SIGKILL only when asked (f here, --force there).
    const std::string sig = procmgmt::signal_name(o.signal);
    t.push_back({"Proceed? y = send " + sig, Style::kWarn});
    t.push_back({fmt::format("         f = send {}, then SIGKILL to what is "
                             "left after {}",
                             sig, elapsed_compact(o.timeout_s)),
                 Style::kWarn});
    t.push_back({"         any other key = nothing is sent", Style::kWarn});
    return t;
  }
  t.push_back({""});
  for (const auto& step : job->steps())
    add_lines(t, step.escalation
                     ? render_escalation(step.alive, step.timeout_s)
                     : render_signal_sent(step.pid, step.sig, step.error));
  if (stage == Stage::kRunning) {
    t.push_back({where.empty()
                     ? "waiting for the processes to exit and NVML to free "
                       "their memory ..."
                     : fmt::format("serve is ending them; its answer comes "
                                   "once they exited and NVML freed their "
                                   "memory (up to {}) ...",
                                   elapsed_compact(3 * o.timeout_s)),
                 Style::kDim});
  } else if (stage == Stage::kDone) {
    const auto& out = job->outcome();
    add_lines(t, render_kill_outcome(out),
              out.result == procmgmt::KillResult::kReleased ||
                      out.result == procmgmt::KillResult::kNoneOnGpu
                  ? Style::kGood
                  : Style::kCrit);
    t.push_back({"Esc: close", Style::kDim});
  } else {
    t.push_back({"kill failed: " + job->error(), Style::kCrit});
  }
  return t;
}

}  // namespace

std::vector<std::string> wrap_text(const std::string& text, int width) {
  std::vector<std::string> out;
  const std::string safe = terminal_safe(text, kTerminalSentenceMax);
  const size_t w = static_cast<size_t>(std::max(1, width));
  std::string line;
  size_t line_w = 0;
  size_t start = 0;
  while (start <= safe.size()) {
    size_t sp = safe.find(' ', start);
    if (sp == std::string::npos) sp = safe.size();
    std::string word = safe.substr(start, sp - start);
    size_t ww = terminal_width(word);
    while (ww > w) {  // a word longer than the line: hard cuts
      if (!line.empty()) {
        out.push_back(line);
        line.clear();
        line_w = 0;
      }
      std::string head = terminal_fit(word, w);
      if (!head.empty() && head.size() >= 1 && head.back() == '~')
        head.pop_back();
      if (head.empty()) break;
      out.push_back(head);
      word = word.substr(head.size());
      ww = terminal_width(word);
    }
    if (line_w > 0 && line_w + 1 + ww > w) {
      out.push_back(line);
      line.clear();
      line_w = 0;
    }
    if (line_w > 0) {
      line += ' ';
      ++line_w;
    }
    line += word;
    line_w += ww;
    start = sp + 1;
  }
  if (!line.empty() || out.empty()) out.push_back(line);
  return out;
}

std::vector<Line> overlay_lines(const LayoutInput& in, int width) {
  const TopState& st = *in.state;
  std::string title;
  std::vector<Text> body;
  switch (st.overlay) {
    case Overlay::kHelp:
      title = "Help";
      body = help_text(in);
      break;
    case Overlay::kDetails:
      title = "Process details";
      body = details_text(in);
      break;
    case Overlay::kFinding:
      title = "Finding";
      body = finding_text(in);
      break;
    case Overlay::kWho:
      title = fmt::format("Who holds GPU {}", st.who_gpu);
      if (in.who)
        add_lines(body, render_who(*in.who));
      else
        body.push_back({"no sample yet"});
      break;
    case Overlay::kKill:
      title = "Kill";
      body = kill_text(in);
      break;
    case Overlay::kNone:
      break;
  }
  std::vector<Line> out;
  LineBuilder head(width);
  head.add(" " + title, Style::kHeading);
  if (st.overlay_scroll > 0)
    head.add(fmt::format("  (scrolled {} lines)", st.overlay_scroll),
             Style::kHeading);
  out.push_back(head.done(Style::kHeading));
  // Each line wrapped to the screen (after the one-column margin), so
  // that no word is cut off; the scroll counts screen lines.
  std::vector<Text> lines;
  for (const Text& t : body)
    for (Text& l : reflow(t, std::max(10, width - 1)))
      lines.push_back(std::move(l));
  for (size_t i = std::min(st.overlay_scroll, lines.size()); i < lines.size();
       ++i) {
    LineBuilder b(width);
    b.add(" ");
    b.add(lines[i].text, lines[i].style);
    out.push_back(b.done());
  }
  return out;
}

}  // namespace gd::top
