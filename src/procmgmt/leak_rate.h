// GPU memory growth of processes over time (`gpudoctor watch-leak`): a
// least-squares line through (t, used bytes) per process and GPU, and when
// the GPU would be full at that rate.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/gpu_lookup.h"
#include "model/sample.h"

namespace gd::procmgmt {

// Fewer points than this give no slope (two points fit any line exactly and
// say nothing about a trend through the noise of allocator caching).
inline constexpr size_t kMinLeakPoints = 3;
// Growth at or above this is reported as a leak. Below it, caching
// allocators' step changes and fragmentation dominate.
inline constexpr double kLeakMiBPerMin = 1.0;

struct Point {
  double t = 0;
  double v = 0;
};

// Least-squares slope of v over t (units of v per second); nullopt for
// fewer than two distinct t.
std::optional<double> least_squares_slope(const std::vector<Point>& points);

struct LeakEstimate {
  int gpu = 0;
  uint32_t pid = 0;
  size_t points = 0;
  double duration_s = 0;
  uint64_t first_bytes = 0, last_bytes = 0, min_bytes = 0, max_bytes = 0;
  std::optional<double> slope_mib_per_min;  // unset: too few points
  std::optional<uint64_t> gpu_free_bytes;   // total - used at the last sample
  std::optional<double> time_to_full_s;     // only when growing
  bool leaking = false;                     // slope >= kLeakMiBPerMin
  bool ended = false;                       // NVML stopped listing it
};

class LeakTracker {
 public:
  // total memory per GPU index, from the trace header.
  explicit LeakTracker(std::map<int, uint64_t> gpu_total_bytes,
                       std::optional<uint32_t> only_pid = std::nullopt,
                       GpuSelection only_gpus = {});
  void add(const Sample& s);
  std::vector<LeakEstimate> estimates() const;
  size_t samples() const { return samples_; }

 private:
  std::map<int, uint64_t> totals_;
  std::optional<uint32_t> only_pid_;
  GpuSelection only_gpus_;  // empty: every GPU
  std::map<std::pair<int, uint32_t>, std::vector<Point>> series_;
  std::map<int, uint64_t> last_used_;
  std::map<std::pair<int, uint32_t>, double> last_seen_;
  double last_t_ = 0;
  size_t samples_ = 0;
};

// `watch-leak`'s loop: feeds `tracker` one sample from `take` now and then
// every `interval_s` while the next one is due within `duration_s`, until
// `stop` is set (Ctrl-C: the summary of what was seen). `on_sample` is told
// the count after each sample (progress).
void watch_leaks(LeakTracker& tracker, const std::function<Sample()>& take,
                 double interval_s, double duration_s,
                 const std::atomic<bool>& stop,
                 const std::function<void(size_t samples)>& on_sample = {});

}  // namespace gd::procmgmt
