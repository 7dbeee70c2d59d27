#include "monitor/window_diagnosis.h"

#include <fmt/format.h>

#include <cmath>

namespace gd::monitor {
namespace {

class WindowSource : public SampleSource {
 public:
  explicit WindowSource(const std::deque<std::shared_ptr<const Sample>>& w)
      : w_(w) {}
  bool next(Sample& out) override {
    if (pos_ >= w_.size()) return false;
    out = *w_[pos_++];
    return true;
  }

 private:
  const std::deque<std::shared_ptr<const Sample>>& w_;
  size_t pos_ = 0;
};

}  // namespace

WindowDiagnosis::WindowDiagnosis(WindowOptions options)
    : options_(std::move(options)) {}

void WindowDiagnosis::add(std::shared_ptr<const Sample> s) {
  if (!window_.empty() && s->t < window_.back()->t) clear();
  const double now = s->t;
  window_.push_back(std::move(s));
  while (!window_.empty() && window_.front()->t < now - options_.window_s)
    window_.pop_front();
}

void WindowDiagnosis::clear() {
  window_.clear();
  last_eval_.reset();
}

std::shared_ptr<const FindingsState> WindowDiagnosis::evaluate_if_due(
    const TraceHeader& header, double now, bool force) {
  if (!force && last_eval_ && now >= *last_eval_ &&
      now - *last_eval_ < options_.evaluate_every_s)
    return nullptr;
  last_eval_ = now;
  auto state = std::make_shared<FindingsState>();
  state->source =
      fmt::format("diagnosis of the last {:.0f} s", options_.window_s);
  state->evaluated_at = now;
  DiagnoseOptions o;
  o.config = options_.config;
  WindowSource source(window_);
  try {
    DiagnoseResult r = diagnose(header, source, o);
    state->findings = std::move(r.findings);
    state->window = r.window;
    state->rules_checked = r.rules_checked.size();
  } catch (const std::exception& e) {
    state->error = e.what();
  }
  return state;
}

}  // namespace gd::monitor
