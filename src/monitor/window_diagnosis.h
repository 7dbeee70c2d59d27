// The findings strip of `top`: the same engine as `diagnose`, re-run over a
// sliding window of the latest samples (as serve does for alerting), so the
// strip says what `gpudoctor diagnose --duration 60s` would say now. The
// window keeps each sample as a zstd-compressed trace line: a minute of a
// node with 500 processes is ~0.5 MB that way instead of ~9 MB of structs,
// for ~4 ms of decompressing and parsing per evaluation.
#pragma once

#include <deque>
#include <memory>

#include "diagnose/engine.h"
#include "model/sample.h"
#include "monitor/frame.h"

namespace gd::monitor {

struct WindowOptions {
  double window_s = 60;  // what the rules see (serve's default)
  // How often they run, at most: on a node where one evaluation costs more
  // than kCpuBudget of a core over this interval, evaluations are spaced
  // out to stay within it (up to kMaxEveryS apart).
  double evaluate_every_s = 5;
  Config config;  // diagnose --config thresholds
};

class WindowDiagnosis {
 public:
  explicit WindowDiagnosis(WindowOptions options = {});
  // Adds a sample (t must not go back; one that does clears the window, as
  // after a seek in a replay).
  void add(std::shared_ptr<const Sample> s);
  void clear();
  // The findings over the window when an evaluation is due at sample time
  // `now` (or `force`), else null.
  std::shared_ptr<const FindingsState> evaluate_if_due(
      const TraceHeader& header, double now, bool force = false);
  size_t samples() const { return window_.size(); }

  // The share of one core the strip may take on average: a minute of 500
  // processes costs ~10-15 ms per evaluation (decompress, parse, every
  // rule), which at every 5 s would be a third of top's CPU.
  static constexpr double kCpuBudget = 0.001;
  static constexpr double kMaxEveryS = 30;
  // Seconds until the next evaluation after one that took `cost_s` of CPU.
  static double next_interval(double every_s, double cost_s);

 private:
  WindowOptions options_;

 public:
  struct Kept {
    double t = 0;
    std::string zstd;  // the sample's trace line, compressed
  };
  // Bytes the window holds (compressed lines).
  size_t bytes() const { return bytes_; }

 private:
  std::deque<Kept> window_;
  size_t bytes_ = 0;
  std::optional<double> last_eval_;
  double next_interval_s_;
};

}  // namespace gd::monitor
