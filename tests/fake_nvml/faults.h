// Fault injection for the fake NVML, from the scenario header's "faults" list.
//
// Vocabulary (each entry one JSON object):
//   {"function": F, "gpu": N, "return": CODE}   F returns CODE (a name such as
//        "NOT_SUPPORTED" / "NVML_ERROR_UNKNOWN", or a number)
//   {"function": F, "gpu": N, "hang_s": S}      F blocks S wall seconds, then
//        answers normally
//   {"function": F, "gpu": N, "latency_ms": M}  F takes M wall ms longer
//   {"gpu": N, "lost_after_s": S}   GPU N answers GPU_IS_LOST from scenario
//        time S on
//   {"gpu": N, "gone_after_s": S}   GPU N drops out of enumeration from
//        scenario time S on: nvmlDeviceGetCount answers one GPU fewer, the
//        last index no longer has a handle, and N's handle answers
//        GPU_IS_LOST (a GPU that fell off the bus)
//   {"init_return": CODE}           nvmlInit* fails with CODE
//   {"missing_symbols": [F, ...]}   each F returns FUNCTION_NOT_FOUND
// Optional on the first three: "gpu" (absent: every GPU, and the system-level
// functions), "function" (absent: every function), "after_s" / "until_s"
// (active only for scenario time in [after_s, until_s)).
// A fault on F also covers F's versioned symbols (F_v2, F_v3...); a fault on
// "F_v3" covers only F_v3.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace fake_nvml {

struct FunctionFault {
  std::string function;    // "" = every function
  std::optional<int> gpu;  // nullopt = every GPU
  std::optional<int> return_code;
  double hang_s = 0;
  double latency_ms = 0;
  std::optional<double> after_s, until_s;  // scenario-time window
};

// What a call should do, decided before it answers.
struct FaultDecision {
  double sleep_s = 0;              // wall time to block first
  std::optional<int> return_code;  // answer this instead of the value
};

class Faults {
 public:
  // Parses the raw JSON text of header "faults" ("" = none). Throws
  // std::runtime_error naming the bad entry.
  static Faults parse(std::string_view json);

  // For `function` on header GPU `gpu` (-1: a call not about one GPU) at
  // scenario time `s`. A missing symbol wins over everything; a lost GPU
  // is not decided here (see lost_after_s).
  FaultDecision decide(std::string_view function, int gpu, double s) const;

  std::optional<int> init_return() const { return init_return_; }
  // Scenario time from which GPU `gpu` is lost, if a fault says so.
  std::optional<double> lost_after_s(int gpu) const;
  // Scenario time from which GPU `gpu` is gone from enumeration, if any.
  std::optional<double> gone_after_s(int gpu) const;
  // How many GPUs are gone from enumeration at scenario time `s`.
  unsigned gone_count(double s) const;
  bool symbol_missing(std::string_view function) const;

  size_t function_fault_count() const { return function_faults_.size(); }

 private:
  std::vector<FunctionFault> function_faults_;
  std::vector<std::pair<int, double>> lost_after_;
  std::vector<std::pair<int, double>> gone_after_;
  std::optional<int> init_return_;
  std::set<std::string, std::less<>> missing_symbols_;
};

// True when a fault naming `fault_name` applies to a call of `called`:
// equal, or `called` is `fault_name` + "_v" + digits.
bool function_matches(std::string_view fault_name, std::string_view called);

}  // namespace fake_nvml
