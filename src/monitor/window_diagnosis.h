// The findings strip of `top`: the same engine as `diagnose`, re-run over a
// sliding window of the latest samples (as serve does for alerting), so the
// strip says what `gpudoctor diagnose --duration 60s` would say now. The
// window keeps each sample as a zstd-compressed trace line: a minute of a
// node with 500 processes is ~0.5 MB that way instead of ~9 MB of structs,
// for ~4 ms of decompressing and parsing per evaluation.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "diagnose/engine.h"
#include "model/sample.h"
#include "monitor/frame.h"

namespace gd::monitor {

// WindowDiagnosis' default CPU budgets (see WindowDiagnosis::kCpuBudget).
inline constexpr double kWindowCpuBudget = 0.001;
inline constexpr double kWindowMaxEveryS = 30;
inline constexpr double kWindowQuietCpuBudget = 0.0002;
inline constexpr double kWindowQuietMaxEveryS = 60;

struct WindowOptions {
  double window_s = 60;  // what the rules see (serve's default)
  // How often they run, at most: on a node where one evaluation costs more
  // than its budget of a core over this interval, evaluations are spaced
  // out to stay within it (up to kMaxEveryS apart). The budget depends on
  // what changed since the last evaluation (see kCpuBudget).
  double evaluate_every_s = 5;
  Config config;  // diagnose --config thresholds
  // The most samples kept, the oldest going first (0: the window's length
  // alone bounds them).
  size_t max_samples = 0;
  // The share of a core one evaluation may take on average, after a change
  // and while quiet, and how far apart evaluations may be spaced to keep
  // within it (see WindowDiagnosis::kCpuBudget). A fleet of windows gives
  // each node its share of the fleet's budget.
  double cpu_budget = kWindowCpuBudget;
  double max_every_s = kWindowMaxEveryS;
  double quiet_cpu_budget = kWindowQuietCpuBudget;
  double quiet_max_every_s = kWindowQuietMaxEveryS;
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
  const WindowOptions& options() const { return options_; }
  // Shares of a core (WindowOptions' cpu_budget and quiet_cpu_budget),
  // from the next evaluation on.
  void set_cpu_budget(double changed, double quiet) {
    options_.cpu_budget = changed;
    options_.quiet_cpu_budget = quiet;
  }

  // The share of one core the strip may take on average: a minute of 500
  // processes costs ~10-15 ms per evaluation (decompress, parse, every
  // rule), which at every 5 s would be a third of top's CPU. The findings
  // are re-judged on change: while the samples since the last evaluation
  // changed nothing a rule keys on first (what changed_from() compares),
  // only the window's sliding can move them, and kQuietCpuBudget applies
  // (up to kQuietMaxEveryS apart: the window's length); after such a
  // change or an event (an Xid...), kCpuBudget. A small node's
  // evaluations (~1 ms) stay every 5 s either way.
  static constexpr double kCpuBudget = kWindowCpuBudget;
  static constexpr double kMaxEveryS = kWindowMaxEveryS;
  static constexpr double kQuietCpuBudget = kWindowQuietCpuBudget;
  static constexpr double kQuietMaxEveryS = kWindowQuietMaxEveryS;
  // Seconds until the next evaluation after one that took `cost_s` of CPU,
  // at `budget` of a core, at most `max_every_s` apart.
  static double next_interval(double every_s, double cost_s,
                              double budget = kCpuBudget,
                              double max_every_s = kMaxEveryS);
  // Whether `now` differs from `before` in what makes the findings worth
  // re-judging soon: a GPU read or lost, its listed processes, its
  // utilisation's band (idle, working, saturated), its memory (by GiB),
  // temperature (by 5 C), clock event reasons, error counters and states;
  // how many processes there are and how many use 90% of a core or more.
  static bool changed_from(const Sample& before, const Sample& now);

  // Exactly what changed_from() compares, kept of the last sample added
  // instead of the sample itself: ~2 KB for 8 GPUs where the sample is
  // ~10 KB (~19 KB with 16 processes), and a fleet keeps a window per node.
  // Two samples' keys are equal exactly when changed_from() says nothing
  // changed.
  struct ChangeKey {
    struct Gpu {
      int index = 0;
      int temp_5c = 0;       // temperature by 5 C; -100 unknown
      int64_t mem_gib = -1;  // memory used in GiB; -1 unknown
      int8_t util_band = 3;  // 0 idle, 1 working, 2 saturated, 3 unknown
      bool lost = false, stale = false;
      opt<bool> retired_pages_pending, remapped_rows_pending;
      opt<uint64_t> ecc_sbe_volatile_total, ecc_dbe_volatile_total,
          pcie_replay_total;
      opt<std::vector<uint32_t>> pids;  // its listed processes'
      opt<std::vector<std::string>> clock_event_reasons;
      std::string recovery_action, fabric_state;
      std::vector<std::string> read_errors;
      bool operator==(const Gpu&) const = default;
    };
    size_t processes = 0;
    size_t busy_processes = 0;  // using 90% of a core or more
    std::vector<Gpu> gpus;
    bool operator==(const ChangeKey&) const = default;
  };
  static ChangeKey change_key(const Sample& s);

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
  double last_cost_s_ = 0;  // CPU of the last evaluation
  // Whether a sample added since the last evaluation changed something
  // (changed_from) or carried an event.
  bool changed_ = false;
  std::optional<ChangeKey> last_added_;  // of the last sample added
};

}  // namespace gd::monitor
