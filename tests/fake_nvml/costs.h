// Opt-in cost model of the fake NVML: per-call wall time measured on a real
// driver, so that a client's timing (not only its answers) has the real
// shape without a GPU. Off unless FAKE_NVML_COSTS names a cost file.
//
// The file is bench_nvml_calls' output (tests/data/real_gpu/
// nvml-call-costs.txt): one call per line, its name, two or more spaces,
// then its median wall time and unit ("us" or "ms"); any further columns
// and every line that does not look like that (headers, sums, notes) are
// ignored, and so are '#' comments. Names are bench_nvml_calls' short ones
// ("GetPcieThroughput(TX)", "GpmMetricsGet (8 metrics)", "dlopen +
// nvmlInit") or NVML's own ("nvmlDeviceGetPcieThroughput"); the argument
// in parentheses is dropped, so one cost covers every argument, and a
// version suffix is dropped on both sides, so "GetMemoryInfo_v2" also
// costs nvmlDeviceGetMemoryInfo. When a call is listed twice, the later
// line wins (the file's last section: the H200).
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>

namespace fake_nvml {

class CallCosts {
 public:
  static CallCosts parse(std::string_view text);
  // Reads `path`; throws std::runtime_error when it cannot be read.
  static CallCosts load(const std::string& path);

  // Wall microseconds a call of `function` (NVML's name) takes; 0 unlisted.
  double wall_us(std::string_view function) const;
  size_t size() const { return us_.size(); }
  bool empty() const { return us_.empty(); }

  // NVML's name for a cost file's name without its version suffix ("" when
  // the name is not a call): "GetTemperature(GPU)" ->
  // "nvmlDeviceGetTemperature".
  static std::string key_for(std::string_view name);

 private:
  std::unordered_map<std::string, double> us_;
};

// Blocks the calling thread for `us` microseconds of wall time: spins below
// a millisecond (a sleep that short oversleeps by the timer slack, 50 us,
// more than many of the calls cost), sleeps above.
void spend_wall_us(double us);

}  // namespace fake_nvml
