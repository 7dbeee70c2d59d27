// What NVML and the kernel log said about one GPU over the burn window:
// temperatures, clock events, link state under load, ECC and row-remap
// counters before and after, Xids. Fed one sample at a time (bounded state).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model/sample.h"

namespace gd::burn {

struct XidSeen {
  int code = 0;
  std::string text;
  double t = 0;
};

struct GpuWatch {
  size_t samples = 0;        // readings of this GPU (lost/stale excluded)
  size_t stale_samples = 0;  // NVML did not answer in time
  bool lost = false;         // fell off the bus / GPU_IS_LOST
  std::optional<int> peak_temp_c;
  std::optional<double> peak_power_w;
  std::optional<int> min_sm_clock_mhz, max_sm_clock_mhz;
  // Samples with each kind of clock event.
  size_t thermal_samples = 0;         // sw/hw thermal slowdown
  size_t hw_slowdown_samples = 0;     // hw slowdown, power brake
  size_t power_cap_samples = 0;       // sw power cap (normal at full load)
  size_t slowdown_samples = 0;        // either of the first two
  size_t any_event_samples = 0;       // any reason but idle / app clocks
  std::optional<int> thermal_temp_c;  // hottest while thermally slowed
  std::set<std::string> reasons_seen;
  // The link as it trained while loaded (the highest seen).
  std::optional<int> pcie_gen, pcie_width;
  std::optional<uint64_t> pcie_replays_first, pcie_replays_last;
  // Counters at the first and last reading.
  std::optional<uint64_t> sbe_first, sbe_last, dbe_first, dbe_last;
  std::optional<uint64_t> remap_corr_first, remap_corr_last;
  std::optional<uint64_t> remap_uncorr_first, remap_uncorr_last;
  bool remap_pending = false, remap_failure = false, retired_pending = false;
  std::vector<XidSeen> xids;  // at most kMaxXids kept
  size_t xid_count = 0;
  size_t aer_events = 0;
  static constexpr size_t kMaxXids = 16;

  // Adds this GPU's part of a sample (and the sample's events about it).
  void add(int gpu, const Sample& sample);
  // Share of the readings with a slowdown (thermal, HW slowdown, power
  // brake), in percent; nullopt without readings.
  std::optional<double> throttled_pct() const;
  std::optional<double> share_pct(size_t count) const;
  std::optional<int64_t> sbe_delta() const;
  std::optional<int64_t> dbe_delta() const;
  std::optional<int64_t> remapped_delta() const;
};

// Clock-event reasons that slow the GPU down because something is wrong
// (heat, power delivery), as opposed to power capping, idling or
// application clocks.
bool is_thermal_reason(const std::string& reason);
bool is_hw_slowdown_reason(const std::string& reason);

}  // namespace gd::burn
