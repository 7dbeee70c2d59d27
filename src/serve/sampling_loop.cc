#include "serve/sampling_loop.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "common/int_list.h"
#include "common/long_run_memory.h"
#include "diagnose/engine.h"
#include "serve/log.h"

namespace gd {
namespace {

// SQLite retention and downsampling once a minute: cheap, and data never
// outlives its retention by more than that.
constexpr double kMaintainEveryS = 60;
// A failing database (disk full) is logged at most this often.
constexpr double kStoreErrorLogEveryS = 60;

using Clock = std::chrono::steady_clock;

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

// A finding's GPUs in a log line; "host" for a host-wide finding.
std::string gpus_text(const std::vector<int>& gpus) {
  return gpus.empty() ? "host" : join_ints(gpus, ",");
}

}  // namespace

SamplingLoop::SamplingLoop(Sampler& sampler, History* history, SnapshotBox& box,
                           ConfigHolder& config,
                           AlertmanagerClient* alertmanager,
                           SamplingLoopOptions options)
    : sampler_(sampler),
      history_(history),
      box_(box),
      config_(config),
      alertmanager_(alertmanager),
      options_(std::move(options)),
      header_(std::make_shared<const TraceHeader>(sampler.header())),
      jobs_(*header_) {
  started_at_ = unix_now();
  for (const auto& g : header_->gpus)
    health_.push_back({g.index, false, false, {}});
  // Nothing logged before the first sample: a GPU that answers then is
  // simply ok.
  logged_gpu_state_.assign(health_.size(), "ok");
  // A history in memory (--no-db) has no store to watch or report.
  if (history_ && history_->on_disk()) {
    store_ = StoreStatus{};  // as if writable, so a full disk is logged now
    if (history_->on_disk()) watch_store();
  }
  policy_ = config_.get()->policy;
  publish();
}

SamplingLoop::~SamplingLoop() { stop(); }

void SamplingLoop::start() {
  thread_ = std::thread([this] { run(); });
}

void SamplingLoop::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  finished_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void SamplingLoop::run() {
  const auto interval = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(options_.interval_s));
  auto next = Clock::now();
  for (;;) {
    bool asked = false;
    {
      std::unique_lock lock(mu_);
      cv_.wait_until(lock, next, [&] { return stopping_ || requested_; });
      if (stopping_) return;
      asked = requested_ && Clock::now() < next;
      requested_ = false;
      ++begun_;
    }
    run_once();
    uint64_t finished = 0;
    {
      std::lock_guard lock(mu_);
      finished = ++finished_;
    }
    // Start-up is over at the second sample (config, nvmlInit, the static
    // facts): the code only it ran, the driver's included, is let go of.
    if (finished == 2) drop_code_pages();
    finished_cv_.notify_all();
    if (asked) continue;  // an extra sample: the schedule stays
    next += interval;
    if (next < Clock::now()) next = Clock::now();  // fell behind: no burst
  }
}

std::shared_ptr<const Sample> SamplingLoop::sample_now(
    std::chrono::milliseconds wait) {
  {
    std::unique_lock lock(mu_);
    // The next sample to begin is the first that begins after this call.
    const uint64_t want = begun_ + 1;
    requested_ = true;
    cv_.notify_all();
    finished_cv_.wait_for(lock, wait,
                          [&] { return stopping_ || finished_ >= want; });
  }
  return box_.get()->sample;
}

void SamplingLoop::run_once() {
  const auto t0 = Clock::now();
  auto sample = std::make_shared<Sample>(sampler_.sample());
  collect_duration_s_ =
      std::chrono::duration<double>(Clock::now() - t0).count();
  // Before anything keeps or exports the sample: bounded size, and no
  // secrets from command lines in the API, history, metrics or alerts.
  processes_left_out_ += apply_process_budget(*sample, options_.process_budget);
  apply_cmdline_exposure(*sample, options_.show_cmdline);
  ++collections_;
  const double now = sample->t;

  for (auto& h : health_) {
    h.success = false;
    h.lost = false;
    for (const auto& g : sample->gpus) {
      if (g.index != h.index) continue;
      h.lost = g.lost;
      h.success = !g.lost && !g.stale;
      if (h.success) h.last_success_t = now;
    }
  }
  log_gpu_changes();
  for (const auto& e : sample->events)
    if (e.kind == "xid" && e.gpu && e.code) last_xid_[*e.gpu] = *e.code;

  if (history_) {
    try {
      history_->append(*sample);
      if (now - last_maintain_ >= kMaintainEveryS) {
        if (last_maintain_ > 0) history_->maintain(now);
        last_maintain_ = now;
      }
    } catch (const std::exception& e) {
      if (now - last_store_error_log_ >= kStoreErrorLogEveryS) {
        spdlog::error("msg=\"history write failed\" error={}",
                      serve_log::q(e.what()));
        last_store_error_log_ = now;
      }
    }
    if (history_->on_disk()) watch_store();
  }

  jobs_.add(*sample);
  latest_ = sample;
  window_.push_back(sample);
  policy_ = config_.get()->policy;
  while (!window_.empty() && window_.front()->t < now - policy_.window_s)
    window_.pop_front();
  if (now - last_eval_ >= policy_.evaluate_every_s) {
    last_eval_ = now;
    evaluate(now);
  }
  publish();
}

// One line per GPU state change (ok -> stale, stale -> ok, -> lost), not one
// per sample.
void SamplingLoop::log_gpu_changes() {
  for (size_t i = 0; i < health_.size(); ++i) {
    const auto& h = health_[i];
    std::string state = h.lost ? "lost" : h.success ? "ok" : "stale";
    if (state == logged_gpu_state_[i]) continue;
    if (state == "ok")
      spdlog::info("msg=\"gpu answers again\" gpu={} was={}", h.index,
                   logged_gpu_state_[i]);
    else
      spdlog::warn("msg=\"gpu {}\" gpu={} was={}", state, h.index,
                   logged_gpu_state_[i]);
    logged_gpu_state_[i] = state;
  }
}

// Logs the store's writable <-> unwritable transitions once each.
void SamplingLoop::watch_store() {
  auto h = history_->health();
  // An unusable history was logged when serve opened it.
  if (store_ && store_->writable && !h.status.writable && h.status.usable)
    spdlog::error(
        "msg=\"history not writable; keeping samples in memory\" error={} "
        "pending_bytes={}",
        serve_log::q(h.last_error), h.status.pending_bytes);
  else if (store_ && !store_->writable && h.status.writable)
    spdlog::info(
        "msg=\"history writable again\" write_errors_total={} "
        "dropped_samples_total={}",
        h.status.write_errors_total, h.status.dropped_samples_total);
  store_ = h.status;
}

void SamplingLoop::evaluate(double now) {
  auto cfg = config_.get();
  DiagnoseOptions options;
  options.config = cfg->rules;
  WindowSource source(window_);
  DiagnoseResult result;
  try {
    result = diagnose(*header_, source, options);
  } catch (const std::exception& e) {
    spdlog::error("msg=\"diagnosis failed\" error={}", serve_log::q(e.what()));
    return;
  }
  evaluated_at_ = now;
  if (options_.on_evaluate) options_.on_evaluate(result.findings, now);
  window_info_ = result.window;
  not_judged_ = std::make_shared<const std::vector<NotJudged>>(
      std::move(result.not_judged));
  auto changed = tracker_.update(result.findings, now, cfg->policy);
  for (const auto& a : changed) {
    const auto& f = a.finding;
    if (history_)
      history_->record_alert({a.key, f.id, f.severity, f.title, f.evidence,
                              f.action, f.gpus, a.since, a.fired_at,
                              a.state == "resolved" ? a.resolved_at : 0});
    if (a.state == "firing")
      spdlog::warn(
          "msg=\"alert firing\" id={} severity={} gpu={} since={:.3f} "
          "title={}",
          f.id, f.severity, gpus_text(f.gpus), a.since, serve_log::q(f.title));
    else
      spdlog::info("msg=\"alert resolved\" id={} severity={} gpu={}", f.id,
                   f.severity, gpus_text(f.gpus));
  }
  if (!alertmanager_) return;
  std::vector<TrackedAlert> batch;
  if (now - last_resend_ >= cfg->policy.resend_every_s) {
    // Periodic re-send of everything firing, plus what just resolved.
    batch = tracker_.firing();
    for (const auto& a : changed)
      if (a.state == "resolved") batch.push_back(a);
    last_resend_ = now;
  } else {
    batch = changed;
  }
  if (!batch.empty())
    alertmanager_->post(alertmanager_payload(
        batch, now, cfg->policy, options_.instance, options_.generator_url));
}

void SamplingLoop::publish() {
  auto s = std::make_shared<Snapshot>();
  s->header = header_;
  s->sample = latest_;
  s->gpu_health = health_;
  s->store = store_;
  s->last_xid = last_xid_;
  s->collect_duration_s = collect_duration_s_;
  s->collections_total = collections_;
  s->processes_left_out_total = processes_left_out_;
  s->started_at = started_at_;
  s->interval_s = options_.interval_s;
  s->alerts = tracker_.active();
  s->evaluated_at = evaluated_at_;
  s->window = window_info_;
  s->not_judged = not_judged_;
  s->policy = policy_;
  s->version = options_.version;
  for (const auto& j : jobs_.counters())
    s->jobs.push_back({j.key, j.name, j.usage.held_s, j.usage.busy_s,
                       j.usage.idle_held_s, j.usage.energy_j});
  std::shared_ptr<const Snapshot> published = s;
  box_.set(std::move(s));
  if (options_.on_publish) options_.on_publish(*published);
}

}  // namespace gd
