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
    : options_(std::move(options)),
      next_interval_s_(options_.evaluate_every_s) {}

void WindowDiagnosis::add(std::shared_ptr<const Sample> s) {
  if (!window_.empty() && s->t < window_.back().t) clear();
  const double now = s->t;
  try {
    window_.push_back({now, compress(sample_to_json(*s))});
    bytes_ += window_.back().zstd.size();
  } catch (const std::exception&) {
    return;  // a sample that cannot be written (t not finite) is left out
  }
  while (!window_.empty() && window_.front().t < now - options_.window_s) {
    bytes_ -= window_.front().zstd.size();
    window_.pop_front();
  }
}

void WindowDiagnosis::clear() {
  window_.clear();
  bytes_ = 0;
  last_eval_.reset();
}

std::shared_ptr<const FindingsState> WindowDiagnosis::evaluate_if_due(
    const TraceHeader& header, double now, bool force) {
  if (!force && last_eval_ && now >= *last_eval_ &&
      now - *last_eval_ < next_interval_s_)
    return nullptr;
  last_eval_ = now;
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
  next_interval_s_ = next_interval(options_.evaluate_every_s,
                                   thread_cpu_seconds() - cpu_before);
  return state;
}

double WindowDiagnosis::next_interval(double every_s, double cost_s) {
  return std::clamp(cost_s / kCpuBudget, every_s,
                    std::max(every_s, kMaxEveryS));
}

}  // namespace gd::monitor
