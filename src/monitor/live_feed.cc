#include "monitor/live_feed.h"

#include <chrono>

#include "common/phase_timing.h"

namespace gd::monitor {

using Clock = std::chrono::steady_clock;

LiveFeed::LiveFeed(const SamplerOptions& sampler_options, double interval_s,
                   WindowOptions window)
    : sampler_(sampler_options),
      header_(std::make_shared<const TraceHeader>(sampler_.header())),
      interval_s_(interval_s),
      diagnosis_(std::move(window)),
      history_(*header_) {
  // A frame with the header at once, so the screen has names to show
  // before the first sample is in.
  auto f = std::make_shared<Frame>();
  f->kind = SourceKind::kLive;
  f->source_name = header_->host.hostname;
  f->header = header_;
  f->interval_s = interval_s_;
  publish(std::move(f));
}

LiveFeed::~LiveFeed() { stop(); }

void LiveFeed::start() {
  thread_ = std::thread([this] { run(); });
}

void LiveFeed::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Sample LiveFeed::sample_now() {
  std::lock_guard lock(sampler_mu_);
  return sampler_.sample();
}

void LiveFeed::run() {
  const auto interval = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(interval_s_));
  auto next = Clock::now();
  for (;;) {
    take_one();
    next += interval;
    if (next < Clock::now()) next = Clock::now();  // fell behind: no burst
    std::unique_lock lock(mu_);
    if (cv_.wait_until(lock, next, [&] { return stopping_; })) return;
  }
}

void LiveFeed::take_one() {
  const auto t0 = Clock::now();
  std::vector<ProcessSample> spent;
  {
    std::lock_guard lock(spent_->mu);
    spent.swap(spent_->processes);  // leaves the box empty
  }
  auto hand_back = [box = spent_](Sample* done) {
    std::unique_ptr<Sample> owned(done);
    // Room for more than twice what the sample used (a burst of processes
    // that has ended) is given back rather than kept.
    const size_t used = owned->processes.size();
    owned->processes.clear();  // their strings go now, the list's room stays
    if (owned->processes.capacity() > 2 * used + 64) return;
    std::lock_guard lock(box->mu);
    if (box->processes.capacity() < owned->processes.capacity())
      box->processes = std::move(owned->processes);
  };
  std::shared_ptr<const Sample> s;
  {
    std::lock_guard lock(sampler_mu_);
    s = std::shared_ptr<const Sample>(
        new Sample(sampler_.sample(std::move(spent))), hand_back);
  }
  const double took = std::chrono::duration<double>(Clock::now() - t0).count();
  const bool first = !findings_;
  if (first) note_phase("top: first sample");
  history_.add(*header_, *s);
  diagnosis_.add(s);
  // The first evaluation comes with the first sample, so the strip is
  // never blank; later ones every few seconds.
  if (auto f = diagnosis_.evaluate_if_due(*header_, s->t)) findings_ = f;
  if (first) note_phase("top: first findings");

  auto f = std::make_shared<Frame>();
  f->kind = SourceKind::kLive;
  f->source_name = header_->host.hostname;
  f->header = header_;
  f->sample = std::move(s);
  f->history = std::make_shared<const GpuHistory>(history_);
  f->findings = findings_;
  f->interval_s = interval_s_;
  f->collect_s = took;
  publish(std::move(f));
}

}  // namespace gd::monitor
