#include "burn/watch.h"

#include <algorithm>

namespace gd::burn {

namespace {

template <typename T>
void keep_max(std::optional<T>& slot, const std::optional<T>& v) {
  if (v && (!slot || *v > *slot)) slot = v;
}

template <typename T>
void keep_min(std::optional<T>& slot, const std::optional<T>& v) {
  if (v && (!slot || *v < *slot)) slot = v;
}

void first_last(std::optional<uint64_t>& first, std::optional<uint64_t>& last,
                const std::optional<uint64_t>& v) {
  if (!v) return;
  if (!first) first = v;
  last = v;
}

std::optional<int64_t> delta(const std::optional<uint64_t>& first,
                             const std::optional<uint64_t>& last) {
  if (!first || !last) return std::nullopt;
  return static_cast<int64_t>(*last) - static_cast<int64_t>(*first);
}

}  // namespace

bool is_thermal_reason(const std::string& r) {
  return r == "sw_thermal_slowdown" || r == "hw_thermal_slowdown";
}

bool is_hw_slowdown_reason(const std::string& r) {
  return r == "hw_slowdown" || r == "hw_power_brake_slowdown";
}

void GpuWatch::add(int gpu, const Sample& sample) {
  for (const auto& e : sample.events) {
    if (e.gpu != gpu) continue;
    if (e.kind == "xid" && e.code) {
      ++xid_count;
      if (xids.size() < kMaxXids) xids.push_back({*e.code, e.text, sample.t});
    } else if (e.kind == "gpu_lost") {
      lost = true;
    } else if (e.kind == kEventPcieAer) {
      ++aer_events;
    }
  }
  const GpuSample* g = nullptr;
  for (const auto& s : sample.gpus)
    if (s.index == gpu) g = &s;
  if (!g) return;
  if (g->lost) {
    lost = true;
    return;
  }
  if (g->stale) {
    ++stale_samples;
    return;
  }
  ++samples;
  keep_max(peak_temp_c, g->temp_c);
  keep_max(peak_power_w, g->power_w);
  keep_min(min_sm_clock_mhz, g->sm_clock_mhz);
  keep_max(max_sm_clock_mhz, g->sm_clock_mhz);
  if (g->clock_event_reasons) {
    bool thermal = false, hw = false, cap = false, any = false;
    for (const auto& r : *g->clock_event_reasons) {
      reasons_seen.insert(r);
      thermal |= is_thermal_reason(r);
      hw |= is_hw_slowdown_reason(r);
      cap |= r == "sw_power_cap";
      any |= r != "gpu_idle" && r != "applications_clocks_setting" &&
             r != "display_clock_setting";
    }
    thermal_samples += thermal;
    hw_slowdown_samples += hw;
    power_cap_samples += cap;
    slowdown_samples += thermal || hw;
    any_event_samples += any;
    if (thermal) keep_max(thermal_temp_c, g->temp_c);
  }
  keep_max(pcie_gen, g->pcie_gen);
  keep_max(pcie_width, g->pcie_width);
  first_last(pcie_replays_first, pcie_replays_last, g->pcie_replay_total);
  first_last(sbe_first, sbe_last, g->ecc_sbe_volatile_total);
  first_last(dbe_first, dbe_last, g->ecc_dbe_volatile_total);
  first_last(remap_corr_first, remap_corr_last,
             g->remapped_rows_correctable_total);
  first_last(remap_uncorr_first, remap_uncorr_last,
             g->remapped_rows_uncorrectable_total);
  remap_pending |= g->remapped_rows_pending.value_or(false);
  remap_failure |= g->remapped_rows_failure.value_or(false);
  retired_pending |= g->retired_pages_pending.value_or(false);
}

std::optional<double> GpuWatch::share_pct(size_t count) const {
  if (samples == 0) return std::nullopt;
  return 100.0 * static_cast<double>(count) / static_cast<double>(samples);
}

std::optional<double> GpuWatch::throttled_pct() const {
  return share_pct(slowdown_samples);
}

std::optional<int64_t> GpuWatch::sbe_delta() const {
  return delta(sbe_first, sbe_last);
}
std::optional<int64_t> GpuWatch::dbe_delta() const {
  return delta(dbe_first, dbe_last);
}
std::optional<int64_t> GpuWatch::remapped_delta() const {
  auto c = delta(remap_corr_first, remap_corr_last);
  auto u = delta(remap_uncorr_first, remap_uncorr_last);
  if (!c && !u) return std::nullopt;
  return c.value_or(0) + u.value_or(0);
}

}  // namespace gd::burn
