#include "monitor/window_diagnosis.h"

#include <fmt/format.h>
#include <time.h>
#include <zstd.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include "trace/trace_io.h"

namespace gd::monitor {
namespace {

// Compression level 1: the fastest, and trace lines of one machine from
// second to second compress ~10x even so.
constexpr int kZstdLevel = 1;

// One compression context per thread that adds samples (top's sampler, a
// fleet's refresher), kept: ZSTD_compress() made and freed one each call,
// its workspace (~0.3 MiB at 575 processes, past glibc's mmap threshold in
// top) mapped and faulted in page by page every second. Per thread rather
// than per window: a fleet keeps a window per node.
ZSTD_CCtx* thread_cctx() {
  thread_local const std::unique_ptr<ZSTD_CCtx, size_t (*)(ZSTD_CCtx*)> cctx(
      ZSTD_createCCtx(), &ZSTD_freeCCtx);
  if (!cctx) throw std::runtime_error("window: out of memory");
  return cctx.get();
}

// The sample's trace line and its compressed form are written into buffers
// kept per thread, as the context is: a fresh string grown by doubling to a
// 575-process line (~170 KB) copied itself ~8 times and mapped new pages
// every second, ~a third of add()'s CPU. The scratch is never zero-filled
// (that cost more than the compression's own writes); the result is copied
// out at its own size.
std::string compressed_line(const Sample& s) {
  thread_local std::string line;
  thread_local std::unique_ptr<char[]> scratch;
  thread_local size_t scratch_size = 0;
  line.clear();
  append_sample_json(line, s);
  const size_t bound = ZSTD_compressBound(line.size());
  if (bound > scratch_size) {
    scratch.reset(new char[bound]);
    scratch_size = bound;
  }
  size_t n = ZSTD_compressCCtx(thread_cctx(), scratch.get(), scratch_size,
                               line.data(), line.size(), kZstdLevel);
  if (ZSTD_isError(n)) throw std::runtime_error(ZSTD_getErrorName(n));
  return std::string(scratch.get(), n);
}

// The window's samples, decompressed one at a time through one context and
// one buffer for the evaluation (both freed with it: top keeps no
// decompression memory between evaluations).
template <typename Kept>
class WindowSource : public SampleSource {
 public:
  explicit WindowSource(const std::deque<Kept>& w)
      : w_(w), dctx_(ZSTD_createDCtx(), &ZSTD_freeDCtx) {
    if (!dctx_) throw std::runtime_error("window: out of memory");
  }
  bool next(Sample& out) override {
    if (pos_ >= w_.size()) return false;
    const std::string& z = w_[pos_++].zstd;
    const unsigned long long size =
        ZSTD_getFrameContentSize(z.data(), z.size());
    if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN)
      throw std::runtime_error("window: a kept sample does not decompress");
    line_.resize(size);
    const size_t n = ZSTD_decompressDCtx(dctx_.get(), line_.data(),
                                         line_.size(), z.data(), z.size());
    if (ZSTD_isError(n)) throw std::runtime_error(ZSTD_getErrorName(n));
    line_.resize(n);
    sample_from_json(line_, "window", out);
    return true;
  }

 private:
  const std::deque<Kept>& w_;
  size_t pos_ = 0;
  std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> dctx_;
  std::string line_;
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
  ChangeKey key = change_key(*s);
  changed_ =
      changed_ || !s->events.empty() || !last_added_ || *last_added_ != key;
  last_added_ = std::move(key);
  try {
    window_.push_back({now, compressed_line(*s)});
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

// 0: idle, 1: working, 2: saturated, 3: unknown.
int8_t util_band_of(const opt<double>& util) {
  return !util ? 3 : *util < 10 ? 0 : *util < 90 ? 1 : 2;
}

}  // namespace

WindowDiagnosis::ChangeKey WindowDiagnosis::change_key(const Sample& s) {
  ChangeKey k;
  k.processes = s.processes.size();
  k.busy_processes = busy_processes(s);
  k.gpus.reserve(s.gpus.size());
  for (const GpuSample& g : s.gpus) {
    ChangeKey::Gpu& o = k.gpus.emplace_back();
    o.index = g.index;
    o.lost = g.lost;
    o.stale = g.stale;
    o.util_band = util_band_of(g.util_pct);
    // Memory in GiB, temperature in 5 C steps: a leak's growth, a GPU
    // heating.
    o.mem_gib =
        g.mem_used_bytes ? static_cast<int64_t>(*g.mem_used_bytes >> 30) : -1;
    o.temp_5c = g.temp_c ? *g.temp_c / 5 : -100;
    o.ecc_sbe_volatile_total = g.ecc_sbe_volatile_total;
    o.ecc_dbe_volatile_total = g.ecc_dbe_volatile_total;
    o.pcie_replay_total = g.pcie_replay_total;
    o.retired_pages_pending = g.retired_pages_pending;
    o.remapped_rows_pending = g.remapped_rows_pending;
    if (g.processes) {
      o.pids.emplace().reserve(g.processes->size());
      for (const GpuProcess& p : *g.processes) o.pids->push_back(p.pid);
    }
    o.clock_event_reasons = g.clock_event_reasons;
    o.recovery_action = g.recovery_action;
    o.fabric_state = g.fabric_state;
    o.read_errors = g.read_errors;
  }
  return k;
}

bool WindowDiagnosis::changed_from(const Sample& before, const Sample& now) {
  return change_key(before) != change_key(now);
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
  // The parser's buffers (~1 MiB for a sample of ~600 processes) are not
  // kept for the next evaluation, seconds away: top's resident memory.
  release_thread_json_buffers();
  last_cost_s_ = thread_cpu_seconds() - cpu_before;
  return state;
}

double WindowDiagnosis::next_interval(double every_s, double cost_s,
                                      double budget, double max_every_s) {
  return std::clamp(cost_s / budget, every_s, std::max(every_s, max_every_s));
}

}  // namespace gd::monitor
