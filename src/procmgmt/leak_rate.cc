#include "procmgmt/leak_rate.h"

#include <algorithm>
#include <chrono>
#include <thread>

namespace gd::procmgmt {

namespace {
constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kSecondsPerMinute = 60.0;
}  // namespace

std::optional<double> least_squares_slope(const std::vector<Point>& pts) {
  if (pts.size() < 2) return std::nullopt;
  // Centered sums: t is Unix time (~1.7e9), and squaring it uncentred
  // loses every digit that matters to double rounding.
  double mt = 0, mv = 0;
  for (const auto& p : pts) {
    mt += p.t;
    mv += p.v;
  }
  mt /= static_cast<double>(pts.size());
  mv /= static_cast<double>(pts.size());
  double sxx = 0, sxy = 0;
  for (const auto& p : pts) {
    sxx += (p.t - mt) * (p.t - mt);
    sxy += (p.t - mt) * (p.v - mv);
  }
  if (sxx <= 0) return std::nullopt;
  return sxy / sxx;
}

LeakTracker::LeakTracker(std::map<int, uint64_t> totals,
                         std::optional<uint32_t> only_pid,
                         GpuSelection only_gpus)
    : totals_(std::move(totals)),
      only_pid_(only_pid),
      only_gpus_(std::move(only_gpus)) {}

void LeakTracker::add(const Sample& s) {
  ++samples_;
  last_t_ = s.t;
  for (const GpuSample& g : s.gpus) {
    if (g.lost || g.stale) continue;
    if (!selects(only_gpus_, g.index)) continue;
    if (g.mem_used_bytes) last_used_[g.index] = *g.mem_used_bytes;
    if (!g.processes) continue;
    for (const GpuProcess& p : *g.processes) {
      if (only_pid_ && p.pid != *only_pid_) continue;
      if (!p.used_bytes) continue;
      auto key = std::make_pair(g.index, p.pid);
      series_[key].push_back({s.t, static_cast<double>(*p.used_bytes)});
      last_seen_[key] = s.t;
    }
  }
}

std::vector<LeakEstimate> LeakTracker::estimates() const {
  std::vector<LeakEstimate> out;
  for (const auto& [key, pts] : series_) {
    LeakEstimate e;
    e.gpu = key.first;
    e.pid = key.second;
    e.points = pts.size();
    e.duration_s = pts.back().t - pts.front().t;
    e.first_bytes = static_cast<uint64_t>(pts.front().v);
    e.last_bytes = static_cast<uint64_t>(pts.back().v);
    auto [mn, mx] = std::minmax_element(
        pts.begin(), pts.end(),
        [](const Point& a, const Point& b) { return a.v < b.v; });
    e.min_bytes = static_cast<uint64_t>(mn->v);
    e.max_bytes = static_cast<uint64_t>(mx->v);
    e.ended = last_seen_.at(key) < last_t_;
    if (pts.size() >= kMinLeakPoints) {
      if (auto slope = least_squares_slope(pts))
        e.slope_mib_per_min = *slope * kSecondsPerMinute / kMiB;
    }
    auto total = totals_.find(e.gpu);
    auto used = last_used_.find(e.gpu);
    if (total != totals_.end() && used != last_used_.end())
      e.gpu_free_bytes =
          total->second > used->second ? total->second - used->second : 0;
    e.leaking = e.slope_mib_per_min && *e.slope_mib_per_min >= kLeakMiBPerMin &&
                !e.ended;
    if (e.leaking && e.gpu_free_bytes)
      e.time_to_full_s = static_cast<double>(*e.gpu_free_bytes) /
                         (*e.slope_mib_per_min * kMiB / kSecondsPerMinute);
    out.push_back(e);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const LeakEstimate& a, const LeakEstimate& b) {
                     return a.slope_mib_per_min.value_or(-1e300) >
                            b.slope_mib_per_min.value_or(-1e300);
                   });
  return out;
}

void watch_leaks(LeakTracker& tracker, const std::function<Sample()>& take,
                 double interval_s, double duration_s,
                 const std::atomic<bool>& stop,
                 const std::function<void(size_t)>& on_sample) {
  using Clock = std::chrono::steady_clock;
  auto interval = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(interval_s));
  auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                std::chrono::duration<double>(duration_s));
  auto next = Clock::now();
  while (!stop.load()) {
    tracker.add(take());
    if (on_sample) on_sample(tracker.samples());
    next += interval;
    if (next > end) break;
    // Short sleeps, so Ctrl-C is answered within 50 ms.
    while (!stop.load() && Clock::now() < next)
      std::this_thread::sleep_for(std::min<Clock::duration>(
          std::chrono::milliseconds(50), next - Clock::now()));
  }
}

}  // namespace gd::procmgmt
