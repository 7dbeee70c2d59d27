// The trace-line parser (json_in.h): a GPU's sample, with its processes,
// NVLinks, MIG instances and row-remap histogram.
#include <iterator>
#include <utility>

#include "trace/json_in_read.h"

namespace gd::json_in {

namespace {

#define GD_GPU_PROCESS_FIELDS(X) \
  X(pid, custom)                 \
  X(used_bytes, plain)           \
  X(type, plain)                 \
  X(sm_util_pct, plain)          \
  X(mem_util_pct, plain)         \
  X(gi_id, plain)                \
  X(ci_id, plain)

void parse_gpu_process(const Loc& loc, object obj, GpuProcess& o) {
  enum class Key { GD_GPU_PROCESS_FIELDS(GD_KEY_ENUM) };
  static constexpr std::string_view kNames[] = {
      GD_GPU_PROCESS_FIELDS(GD_KEY_NAME)};
  GD_GPU_PROCESS_FIELDS(GD_CLEAR)
  bool have_pid = false;
  size_t cursor = 0;
  for (auto f : obj) {
    switch (static_cast<Key>(find_key(kNames, f.key, cursor))) {
      GD_GPU_PROCESS_FIELDS(GD_CASE)
      case Key::pid:
        o.pid = integer_of<uint32_t>(loc, f.key, f.value);
        have_pid = true;
        break;
    }
  }
  if (!have_pid) missing(loc, "pid");
}

#define GD_NVLINK_FIELDS(X)  \
  X(link, custom)            \
  X(active, plain)           \
  X(version, plain)          \
  X(crc_errors_total, plain) \
  X(replay_total, plain)     \
  X(recovery_total, plain)

void parse_nvlink(const Loc& loc, object obj, NvLink& o) {
  enum class Key { GD_NVLINK_FIELDS(GD_KEY_ENUM) };
  static constexpr std::string_view kNames[] = {GD_NVLINK_FIELDS(GD_KEY_NAME)};
  GD_NVLINK_FIELDS(GD_CLEAR)
  bool have_link = false;
  size_t cursor = 0;
  for (auto f : obj) {
    switch (static_cast<Key>(find_key(kNames, f.key, cursor))) {
      GD_NVLINK_FIELDS(GD_CASE)
      case Key::link:
        o.link = integer_of<int>(loc, f.key, f.value);
        have_link = true;
        break;
    }
  }
  if (!have_link) missing(loc, "link");
}

}  // namespace

#define GD_MIG_INSTANCE_FIELDS(X) \
  X(gi_id, custom)                \
  X(ci_id, custom)                \
  X(profile, plain)               \
  X(uuid, plain)                  \
  X(mem_total_bytes, plain)       \
  X(mem_used_bytes, plain)        \
  GD_GPM_FIELDS(X)

void parse_mig_instance(const Loc& loc, object obj, MigInstance& o) {
  enum class Key { GD_MIG_INSTANCE_FIELDS(GD_KEY_ENUM) };
  static constexpr std::string_view kNames[] = {
      GD_MIG_INSTANCE_FIELDS(GD_KEY_NAME)};
  GD_MIG_INSTANCE_FIELDS(GD_CLEAR)
  bool have_gi = false, have_ci = false;
  size_t cursor = 0;
  for (auto f : obj) {
    switch (static_cast<Key>(find_key(kNames, f.key, cursor))) {
      GD_MIG_INSTANCE_FIELDS(GD_CASE)
      case Key::gi_id:
        o.gi_id = integer_of<uint32_t>(loc, f.key, f.value);
        have_gi = true;
        break;
      case Key::ci_id:
        o.ci_id = integer_of<uint32_t>(loc, f.key, f.value);
        have_ci = true;
        break;
    }
  }
  if (!have_gi) missing(loc, "gi_id");
  if (!have_ci) missing(loc, "ci_id");
}

namespace {

// {"max": 639, "high": 1, ...}: every bank count is required, so a
// histogram is never half-known.
void read_remap_histogram(const Loc& parent, std::string_view key, element v,
                          std::optional<RowRemapHistogram>& out) {
  if (v.is_null()) {
    out.reset();
    return;
  }
  object obj;
  if (v.get_object().get(obj)) wrong_type(parent, key, "an object", v);
  const Loc loc = parent.member(key);
  RowRemapHistogram h;
  static constexpr std::string_view kNames[] = {"max", "high", "partial", "low",
                                                "none"};
  uint32_t* into[] = {&h.max, &h.high, &h.partial, &h.low, &h.none};
  bool seen[std::size(kNames)] = {};
  // One pass over the members (a lookup per bank scanned them five times).
  size_t cursor = 0;
  for (auto f : obj) {
    const int i = find_key(kNames, f.key, cursor);
    if (i < 0) continue;
    *into[i] = integer_of<uint32_t>(loc, kNames[i], f.value);
    seen[i] = true;
  }
  for (size_t i = 0; i < std::size(kNames); ++i)
    if (!seen[i]) missing(loc, kNames[i]);
  out = h;
}

}  // namespace

#define GD_GPU_SAMPLE_FIELDS(X)                    \
  X(index, custom)                                 \
  X(util_pct, plain)                               \
  X(mem_util_pct, plain)                           \
  X(mem_used_bytes, plain)                         \
  X(temp_c, plain)                                 \
  X(mem_temp_c, plain)                             \
  X(power_w, plain)                                \
  X(energy_mj_total, plain)                        \
  X(fan_pct, plain)                                \
  X(sm_clock_mhz, plain)                           \
  X(mem_clock_mhz, plain)                          \
  X(pstate, plain)                                 \
  X(clock_event_reasons, custom)                   \
  X(pcie_gen, plain)                               \
  X(pcie_width, plain)                             \
  X(pcie_tx_bytes_per_s, plain)                    \
  X(pcie_rx_bytes_per_s, plain)                    \
  X(pcie_replay_total, plain)                      \
  X(ecc_sbe_volatile_total, plain)                 \
  X(ecc_dbe_volatile_total, plain)                 \
  X(retired_pages_pending, plain)                  \
  X(remapped_rows_pending, plain)                  \
  X(remapped_rows_failure, plain)                  \
  X(processes, custom)                             \
  X(mem_reserved_bytes, plain)                     \
  X(bar1_used_bytes, plain)                        \
  X(ecc_sbe_aggregate_total, plain)                \
  X(ecc_dbe_aggregate_total, plain)                \
  X(ecc_sram_correctable_aggregate_total, plain)   \
  X(ecc_sram_uncorrectable_aggregate_total, plain) \
  X(ecc_dram_correctable_aggregate_total, plain)   \
  X(ecc_dram_uncorrectable_aggregate_total, plain) \
  X(ecc_sram_correctable_volatile_total, plain)    \
  X(ecc_sram_uncorrectable_volatile_total, plain)  \
  X(ecc_dram_correctable_volatile_total, plain)    \
  X(ecc_dram_uncorrectable_volatile_total, plain)  \
  X(ecc_sram_threshold_exceeded, plain)            \
  X(remapped_rows_correctable_total, plain)        \
  X(remapped_rows_uncorrectable_total, plain)      \
  X(row_remap_histogram, custom)                   \
  X(recovery_action, plain)                        \
  X(temp_limit_margin_c, plain)                    \
  X(read_errors, custom)                           \
  GD_GPM_FIELDS(X)                                 \
  X(nvlink_tx_bytes_per_s, plain)                  \
  X(nvlink_rx_bytes_per_s, plain)                  \
  X(nvlinks, custom)                               \
  X(mig_instances, custom)                         \
  X(enc_util_pct, plain)                           \
  X(dec_util_pct, plain)                           \
  X(fabric_state, plain)                           \
  X(lost, custom)                                  \
  X(stale, custom)

[[gnu::flatten]] void parse_gpu_sample(const Loc& loc, object obj,
                                       GpuSample& o) {
  enum class Key { GD_GPU_SAMPLE_FIELDS(GD_KEY_ENUM) };
  static constexpr std::string_view kNames[] = {
      GD_GPU_SAMPLE_FIELDS(GD_KEY_NAME)};
  GD_GPU_SAMPLE_FIELDS(GD_CLEAR)
  o.lost = o.stale = false;
  o.row_remap_histogram.reset();
  o.read_errors.clear();
  // The optional vectors are kept (cleared) while parsing so their storage is
  // reused, and dropped at the end if the line did not have them.
  bool have_index = false, have_reasons = false, have_processes = false,
       have_nvlinks = false, have_mig = false;
  size_t cursor = 0;
  for (auto f : obj) {
    switch (static_cast<Key>(find_key(kNames, f.key, cursor))) {
      GD_GPU_SAMPLE_FIELDS(GD_CASE)
      case Key::nvlinks:
        read_optional_array(loc, f.key, f.value, o.nvlinks, have_nvlinks,
                            parse_nvlink);
        break;
      case Key::mig_instances:
        read_optional_array(loc, f.key, f.value, o.mig_instances, have_mig,
                            parse_mig_instance);
        break;
      case Key::index:
        o.index = integer_of<int>(loc, f.key, f.value);
        have_index = true;
        break;
      case Key::lost:
        o.lost = read_flag(loc, f.key, f.value);
        break;
      case Key::stale:
        o.stale = read_flag(loc, f.key, f.value);
        break;
      case Key::clock_event_reasons:
        if (f.value.is_null()) break;
        if (!o.clock_event_reasons) o.clock_event_reasons.emplace();
        read_string_list(loc, f.key, f.value, *o.clock_event_reasons);
        have_reasons = true;
        break;
      case Key::processes:
        if (f.value.is_null()) break;
        if (!o.processes) o.processes.emplace();
        read_object_array(loc, f.key, f.value, *o.processes, parse_gpu_process);
        have_processes = true;
        break;
      case Key::row_remap_histogram:
        read_remap_histogram(loc, f.key, f.value, o.row_remap_histogram);
        break;
      case Key::read_errors:
        read_string_list(loc, f.key, f.value, o.read_errors);
        break;
    }
  }
  if (!have_index) missing(loc, "index");
  if (!have_reasons) o.clock_event_reasons.reset();
  if (!have_processes) o.processes.reset();
  if (!have_nvlinks) o.nvlinks.reset();
  if (!have_mig) o.mig_instances.reset();
  keep_only_marker_if_unread(o);
}

void keep_only_marker_if_unread(GpuSample& o) {
  if (o.lost || o.stale) {
    // A lost/stale GPU has no readings, whatever else the line holds.
    GpuSample marker;
    marker.index = o.index;
    marker.lost = o.lost;
    marker.stale = o.stale;
    o = std::move(marker);
  }
}

void clear_gpu_readings(GpuSample& o) {
  GD_GPU_SAMPLE_FIELDS(GD_CLEAR)
  o.lost = o.stale = false;
  o.row_remap_histogram.reset();
  o.read_errors.clear();
  o.clock_event_reasons.reset();
  o.nvlinks.reset();
  o.mig_instances.reset();
}

}  // namespace gd::json_in
