#include "monitor/fleet_windows.h"

#include <algorithm>
#include <set>

#include "diagnose/evidence.h"
#include "monitor/window_diagnosis.h"

namespace gd::monitor {

struct FleetWindows::Window {
  explicit Window(WindowOptions o) : diagnosis(std::move(o)) {}
  WindowDiagnosis diagnosis;
  double last_t = 0;    // the newest scrape added
  bool filled = false;  // by fill(): to be judged whole
  unsigned fill = 0;    // the begin_fill() it was filled after
  // Of the last judging: its warnings and critical findings, and the rules
  // that could not judge.
  std::vector<check::CheckFinding> findings;
  std::vector<NotJudged> not_judged;
  size_t samples = 0;
  double span_s = 0;
};

FleetWindows::FleetWindows() = default;
FleetWindows::~FleetWindows() = default;

size_t FleetWindows::samples() const {
  size_t n = 0;
  for (const auto& [node, w] : windows_) n += w->diagnosis.samples();
  return n;
}

size_t FleetWindows::bytes() const {
  size_t n = 0;
  for (const auto& [node, w] : windows_) n += w->diagnosis.bytes();
  return n;
}

namespace {

WindowOptions fleet_window_options() {
  WindowOptions o;
  o.window_s = kFleetWindowS;
  o.max_samples = kFleetWindowSamples;
  // Judged on each new scrape when the budget allows.
  o.evaluate_every_s = 0;
  return o;
}

// The window's warnings and critical findings (the fleet's screen lists
// what needs a look), and what it could not judge.
void keep_judged(const FindingsState& st, std::vector<check::CheckFinding>& out,
                 std::vector<NotJudged>& not_judged) {
  out.clear();
  if (!st.error.empty()) {
    not_judged = {{"window", "its scrapes could not be judged: " + st.error}};
    return;
  }
  for (const Finding& f : st.findings)
    if (severity_rank(f.severity) >= severity_rank("warning"))
      out.push_back({f, f.title, 0});
  not_judged = st.not_judged;
}

// check's findings first; the window's add what check did not give, and
// what it could not judge unless check judged it.
void add_window_findings(check::Result& out,
                         const std::vector<check::CheckFinding>& findings,
                         const std::vector<NotJudged>& not_judged) {
  for (const auto& c : findings) {
    const bool twice = std::any_of(out.findings.begin(), out.findings.end(),
                                   [&](const check::CheckFinding& o) {
                                     return o.finding.id == c.finding.id &&
                                            o.finding.gpus == c.finding.gpus;
                                   });
    if (!twice) out.findings.push_back(c);
  }
  std::set<std::string> found, listed;
  for (const auto& c : out.findings) found.insert(c.finding.id);
  for (const auto& nj : out.not_judged) listed.insert(nj.id);
  for (const auto& nj : not_judged)
    if (!found.count(nj.id) && listed.insert(nj.id).second)
      out.not_judged.push_back(nj);
  std::stable_sort(out.findings.begin(), out.findings.end(),
                   [](const auto& a, const auto& b) {
                     return severity_rank(a.finding.severity) >
                            severity_rank(b.finding.severity);
                   });
}

}  // namespace

void FleetWindows::fill(std::vector<promsource::NodeHistory>&& slice) {
  for (auto& h : slice) {
    if (h.samples.empty()) continue;
    auto& w = windows_[h.node];
    if (!w || w->fill != fill_) {
      w = std::make_unique<Window>(fleet_window_options());
      w->fill = fill_;
    }
    for (auto& s : h.samples) {
      // In time order, each scrape once (a slice's seam may repeat one).
      if (s.t < w->last_t + kFleetWindowStepS) continue;
      w->last_t = s.t;
      w->diagnosis.add(std::make_shared<const Sample>(std::move(s)));
    }
    w->filled = true;
  }
}

void FleetWindows::judge(std::vector<FleetNodeState>& nodes) {
  std::set<std::string> kept;
  size_t judged_nodes = 0;
  for (const auto& n : nodes) judged_nodes += n.listed && n.data.error.empty();
  // Each node's share of the fleet's budget.
  const double share =
      1.0 / static_cast<double>(std::max<size_t>(1, judged_nodes));
  for (auto& n : nodes) {
    if (!n.listed || !n.data.error.empty()) continue;
    kept.insert(n.data.node);
    auto& slot = windows_[n.data.node];
    if (!slot) slot = std::make_unique<Window>(fleet_window_options());
    Window& w = *slot;
    // The sample at the time of its newest series: a scrape is added once.
    const bool added = !n.data.sample.gpus.empty() &&
                       n.data.last_seen >= w.last_t + kFleetWindowStepS;
    if (added) {
      w.last_t = n.data.last_seen;
      auto s = std::make_shared<Sample>(n.data.sample);
      s->t = n.data.last_seen;
      w.diagnosis.add(std::move(s));
    }
    if (added || w.filled) {
      w.diagnosis.set_cpu_budget(kFleetWindowCpuBudget * share,
                                 kFleetWindowQuietCpuBudget * share);
      if (auto st =
              w.diagnosis.evaluate_if_due(n.data.header, w.last_t, w.filled)) {
        keep_judged(*st, w.findings, w.not_judged);
        w.samples = st->window.samples;
        w.span_s = st->window.end - st->window.start;
      }
      w.filled = false;
    }
    n.window_samples = w.samples;
    n.window_span_s = w.span_s;
    add_window_findings(n.judged, w.findings, w.not_judged);
  }
  for (auto it = windows_.begin(); it != windows_.end();)
    it = kept.count(it->first) ? std::next(it) : windows_.erase(it);
}

}  // namespace gd::monitor
