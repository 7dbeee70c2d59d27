#include "monitor/window_diagnosis.h"

#include <fmt/format.h>
#include <time.h>
#include <zstd.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "trace/trace_io.h"

namespace gd::monitor {
namespace {

// Compression level 1: the fastest, and trace lines of one machine from
// second to second compress ~10x even so.
constexpr int kZstdLevel = 1;

std::string compress(const std::string& line) {
  std::string out(ZSTD_compressBound(line.size()), '\0');
  size_t n = ZSTD_compress(out.data(), out.size(), line.data(), line.size(),
                           kZstdLevel);
  if (ZSTD_isError(n)) throw std::runtime_error(ZSTD_getErrorName(n));
  out.resize(n);
  out.shrink_to_fit();
  return out;
}

std::string decompress(const std::string& z) {
  unsigned long long size = ZSTD_getFrameContentSize(z.data(), z.size());
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN)
    throw std::runtime_error("window: a kept sample does not decompress");
  std::string out(size, '\0');
  size_t n = ZSTD_decompress(out.data(), out.size(), z.data(), z.size());
  if (ZSTD_isError(n)) throw std::runtime_error(ZSTD_getErrorName(n));
  out.resize(n);
  return out;
}

template <typename Kept>
class WindowSource : public SampleSource {
 public:
  explicit WindowSource(const std::deque<Kept>& w) : w_(w) {}
  bool next(Sample& out) override {
    if (pos_ >= w_.size()) return false;
    sample_from_json(decompress(w_[pos_++].zstd), "window", out);
    return true;
  }

 private:
  const std::deque<Kept>& w_;
  size_t pos_ = 0;
};

double thread_cpu_seconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) +
         static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

WindowDiagnosis::WindowDiagnosis(WindowOptions options)
    : options_(std::move(options)) {}

void WindowDiagnosis::add(std::shared_ptr<const Sample> s) {
  if (!window_.empty() && s->t < window_.back().t) clear();
  const double now = s->t;
  changed_ = changed_ || !s->events.empty() || !last_added_ ||
             changed_from(*last_added_, *s);
  last_added_ = s;
  try {
    window_.push_back({now, compress(sample_to_json(*s))});
    bytes_ += window_.back().zstd.size();
  } catch (const std::exception&) {
    return;  // a sample that cannot be written (t not finite) is left out
  }
  while (!window_.empty() &&
         (window_.front().t < now - options_.window_s ||
          (options_.max_samples && window_.size() > options_.max_samples))) {
    bytes_ -= window_.front().zstd.size();
    window_.pop_front();
  }
}

void WindowDiagnosis::clear() {
  window_.clear();
  bytes_ = 0;
  last_eval_.reset();
  last_added_.reset();
  changed_ = false;
}

namespace {

// Processes using at least 90% of a core: a worker turning saturated (an
// input-bound job) or other work turning busy.
size_t busy_processes(const Sample& s) {
  size_t n = 0;
  for (const ProcessSample& p : s.processes) n += p.cpu_pct && *p.cpu_pct >= 90;
  return n;
}

}  // namespace

bool WindowDiagnosis::changed_from(const Sample& before, const Sample& now) {
  if (before.gpus.size() != now.gpus.size() ||
      before.processes.size() != now.processes.size() ||
      busy_processes(before) != busy_processes(now))
    return true;
  // 0: idle, 1: working, 2: saturated, 3: unknown.
  auto band = [](const opt<double>& util) {
    return !util ? 3 : *util < 10 ? 0 : *util < 90 ? 1 : 2;
  };
  // Memory in GiB, temperature in 5 C steps: a leak's growth, a GPU heating.
  auto gib = [](const opt<uint64_t>& b) {
    return b ? static_cast<int64_t>(*b >> 30) : -1;
  };
  auto five_c = [](const opt<int>& c) { return c ? *c / 5 : -100; };
  for (size_t i = 0; i < now.gpus.size(); ++i) {
    const GpuSample &a = before.gpus[i], &b = now.gpus[i];
    if (a.index != b.index || a.lost != b.lost || a.stale != b.stale ||
        band(a.util_pct) != band(b.util_pct) ||
        gib(a.mem_used_bytes) != gib(b.mem_used_bytes) ||
        five_c(a.temp_c) != five_c(b.temp_c) ||
        a.clock_event_reasons != b.clock_event_reasons ||
        a.ecc_sbe_volatile_total != b.ecc_sbe_volatile_total ||
        a.ecc_dbe_volatile_total != b.ecc_dbe_volatile_total ||
        a.pcie_replay_total != b.pcie_replay_total ||
        a.retired_pages_pending != b.retired_pages_pending ||
        a.remapped_rows_pending != b.remapped_rows_pending ||
        a.recovery_action != b.recovery_action ||
        a.fabric_state != b.fabric_state || a.read_errors != b.read_errors ||
        a.processes.has_value() != b.processes.has_value())
      return true;
    if (!a.processes) continue;
    if (a.processes->size() != b.processes->size()) return true;
    for (size_t j = 0; j < a.processes->size(); ++j)
      if ((*a.processes)[j].pid != (*b.processes)[j].pid) return true;
  }
  return false;
}

std::shared_ptr<const FindingsState> WindowDiagnosis::evaluate_if_due(
    const TraceHeader& header, double now, bool force) {
  if (!force && last_eval_ && now >= *last_eval_) {
    const double every =
        changed_ ? next_interval(options_.evaluate_every_s, last_cost_s_,
                                 options_.cpu_budget, options_.max_every_s)
                 : next_interval(options_.evaluate_every_s, last_cost_s_,
                                 options_.quiet_cpu_budget,
                                 options_.quiet_max_every_s);
    if (now - *last_eval_ < every) return nullptr;
  }
  last_eval_ = now;
  changed_ = false;
  const double cpu_before = thread_cpu_seconds();
  auto state = std::make_shared<FindingsState>();
  state->source =
      fmt::format("diagnosis of the last {:.0f} s", options_.window_s);
  state->evaluated_at = now;
  DiagnoseOptions o;
  o.config = options_.config;
  WindowSource<Kept> source(window_);
  try {
    DiagnoseResult r = diagnose(header, source, o);
    state->findings = std::move(r.findings);
    state->window = r.window;
    state->rules_checked = r.rules_checked.size();
    state->not_judged = std::move(r.not_judged);
  } catch (const std::exception& e) {
    state->error = e.what();
  }
  last_cost_s_ = thread_cpu_seconds() - cpu_before;
  return state;
}

double WindowDiagnosis::next_interval(double every_s, double cost_s,
                                      double budget, double max_every_s) {
  return std::clamp(cost_s / budget, every_s, std::max(every_s, max_every_s));
}

}  // namespace gd::monitor
