#include "monitor/replay_feed.h"

#include <algorithm>
#include <chrono>
#include <utility>

namespace gd::monitor {

using Clock = std::chrono::steady_clock;

ReplayFeed::ReplayFeed(std::string path, double speed, WindowOptions window)
    : path_(std::move(path)),
      reader_(std::make_unique<TraceReader>(path_)),
      header_(std::make_shared<const TraceHeader>(reader_->header())),
      diagnosis_(std::move(window)),
      history_(*header_),
      speed_(std::clamp(speed, kMinSpeed, kMaxSpeed)) {
  // The first sample is shown at once (and its time is the trace's start).
  if (read_next()) {
    start_t_ = next_.t;
    auto s = std::make_shared<const Sample>(next_);
    have_next_ = false;
    history_.add(*header_, *s);
    diagnosis_.add(s);
    findings_ = diagnosis_.evaluate_if_due(*header_, s->t, true);
    current_ = std::move(s);
    have_next_ = read_next();
  }
  show_current();
}

ReplayFeed::~ReplayFeed() { stop(); }

void ReplayFeed::start() {
  thread_ = std::thread([this] { run(); });
}

void ReplayFeed::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ReplayFeed::control(ReplayCommand c) {
  {
    std::lock_guard lock(mu_);
    switch (c) {
      case ReplayCommand::kTogglePause:
        paused_ = !paused_;
        break;
      case ReplayCommand::kFaster:
        speed_ = std::min(kMaxSpeed, speed_ * 2);
        break;
      case ReplayCommand::kSlower:
        speed_ = std::max(kMinSpeed, speed_ / 2);
        break;
      case ReplayCommand::kSeekBack:
        seek_by_ -= kSeekStepS;
        break;
      case ReplayCommand::kSeekForward:
        seek_by_ += kSeekStepS;
        break;
    }
    changed_ = true;
  }
  cv_.notify_all();
}

bool ReplayFeed::read_next() {
  if (!reader_) return false;
  try {
    return reader_->next(next_);
  } catch (const std::exception& e) {
    problem_ = e.what();
    reader_.reset();
    return false;
  }
}

void ReplayFeed::seek_to(double t) {
  const double now_t = current_ ? current_->t : start_t_;
  if (t < now_t) {
    // Traces stream: backwards means reading again from the start.
    if (path_ == "-") {
      problem_ = "a trace read from stdin cannot seek backwards";
      return;
    }
    try {
      reader_ = std::make_unique<TraceReader>(path_);
    } catch (const std::exception& e) {
      problem_ = e.what();
      reader_.reset();
      return;
    }
    diagnosis_.clear();
    history_.clear();
    current_.reset();
    have_next_ = read_next();
  }
  // Forward to the first sample at or after t (or the last one).
  while (have_next_ && (!current_ || next_.t <= t)) {
    auto s = std::make_shared<const Sample>(next_);
    history_.add(*header_, *s);
    diagnosis_.add(s);
    current_ = std::move(s);
    have_next_ = read_next();
  }
  if (current_)
    findings_ = diagnosis_.evaluate_if_due(*header_, current_->t, true);
}

void ReplayFeed::show_current() {
  auto f = std::make_shared<Frame>();
  f->kind = SourceKind::kReplay;
  f->source_name = path_ == "-" ? "stdin" : path_;
  f->header = header_;
  f->sample = current_;
  if (current_) f->history = std::make_shared<const GpuHistory>(history_);
  f->findings = findings_;
  f->problem = problem_;
  ReplayState r;
  {
    std::lock_guard lock(mu_);
    r.paused = paused_;
    r.speed = speed_;
    r.ended = !have_next_;
  }
  r.start_t = start_t_;
  r.position_t = current_ ? current_->t : start_t_;
  f->replay = r;
  publish(std::move(f));
}

void ReplayFeed::run() {
  // Wall time at which next_ is due at the current speed.
  auto due = [&] {
    double gap = current_ && have_next_ ? (next_.t - current_->t) : 0;
    // A gap in the trace (the collector stopped) is not waited out in full.
    gap = std::clamp(gap, 0.0, 10.0);
    return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(gap / speed_));
  };
  std::unique_lock lock(mu_);
  auto next_at = due();
  for (;;) {
    const bool waiting = paused_ || !have_next_;
    auto wake = [&] { return stopping_ || changed_; };
    if (waiting)
      cv_.wait(lock, wake);
    else
      cv_.wait_until(lock, next_at, wake);
    if (stopping_) return;
    if (changed_) {
      changed_ = false;
      const double by = std::exchange(seek_by_, 0.0);
      lock.unlock();
      if (by != 0) seek_to((current_ ? current_->t : start_t_) + by);
      show_current();
      lock.lock();
      next_at = due();
      continue;
    }
    if (waiting) continue;
    lock.unlock();
    auto s = std::make_shared<const Sample>(next_);
    history_.add(*header_, *s);
    diagnosis_.add(s);
    if (auto f = diagnosis_.evaluate_if_due(*header_, s->t)) findings_ = f;
    current_ = std::move(s);
    have_next_ = read_next();
    show_current();
    lock.lock();
    next_at = due();
  }
}

}  // namespace gd::monitor
