// Strict trace-line parser. Rules (trace-format.md): unknown fields are
// ignored; absent or null means unknown (nullopt, or "" for plain strings);
// a value of the wrong type, or a missing required field, is an error that
// names the field. Nothing is guessed.
#include "trace/json_in.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <string_view>
#include <utility>
#include <vector>

#include "model/process_budget.h"
#include "trace/faults_json.h"
#include "trace/trace_checks.h"
#include "trace/trace_io.h"

namespace gd::json_in {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::element_type;
using simdjson::dom::object;

// ---- where in the line we are, for error messages --------------------------

// A stack-allocated chain "gpus[1]" -> "processes[0]"; turned into text only
// when there is an error to report.
struct Loc {
  const std::string& where;  // "FILE:LINE"
  const Loc* parent;
  std::string_view name;  // "" = root
  size_t index;           // element of array `name`, or kNotInArray

  static constexpr size_t kNotInArray = ~size_t{0};

  Loc child(std::string_view array_name, size_t i) const {
    return Loc{where, this, array_name, i};
  }
  Loc member(std::string_view object_name) const {
    return Loc{where, this, object_name, kNotInArray};
  }
};

std::string path_of(const Loc& loc, std::string_view key) {
  std::vector<const Loc*> chain;
  for (const Loc* l = &loc; l; l = l->parent) {
    if (!l->name.empty()) chain.push_back(l);
  }
  std::string p;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    if (!p.empty()) p += '.';
    p.append((*it)->name);
    if ((*it)->index != Loc::kNotInArray) {
      p += '[' + std::to_string((*it)->index) + ']';
    }
  }
  if (!key.empty()) {
    if (!p.empty()) p += '.';
    p.append(key);
  }
  return p;
}

[[noreturn, gnu::noinline, gnu::cold]] void fail(const Loc& loc,
                                                 std::string_view key,
                                                 const std::string& what) {
  std::string msg = loc.where + ": ";
  std::string path = path_of(loc, key);
  if (!path.empty()) msg += path + ": ";
  msg += what;
  throw TraceError(msg);
}

const char* type_name(element_type t) {
  switch (t) {
    case element_type::ARRAY:
      return "an array";
    case element_type::OBJECT:
      return "an object";
    case element_type::INT64:
    case element_type::UINT64:
      return "an integer";
    case element_type::DOUBLE:
      return "a number";
    case element_type::STRING:
      return "a string";
    case element_type::BOOL:
      return "a boolean";
    case element_type::NULL_VALUE:
      return "null";
  }
  return "something else";
}

[[noreturn, gnu::noinline, gnu::cold]] void wrong_type(const Loc& loc,
                                                       std::string_view key,
                                                       const char* expected,
                                                       element v) {
  fail(loc, key,
       std::string("expected ") + expected + ", got " + type_name(v.type()));
}

[[noreturn, gnu::noinline, gnu::cold]] void missing(const Loc& loc,
                                                    std::string_view key) {
  fail(loc, "", "missing required field \"" + std::string(key) + "\"");
}

// ---- scalar readers: one overload per model type ---------------------------

double number_of(element v) {
  switch (v.type()) {
    case element_type::INT64:
      return static_cast<double>(v.get_int64().value_unsafe());
    case element_type::UINT64:
      return static_cast<double>(v.get_uint64().value_unsafe());
    default:
      return v.get_double().value_unsafe();
  }
}

bool is_number(element_type t) {
  return t == element_type::INT64 || t == element_type::UINT64 ||
         t == element_type::DOUBLE;
}

// Integer fields accept JSON integers, and floats with an integral value
// (71.0: some writers only have floats); 71.5 or an out-of-range value is an
// error, never rounded or clamped.
template <typename T>
T integer_of(const Loc& loc, std::string_view key, element v) {
  using L = std::numeric_limits<T>;
  auto out_of_range = [&](const std::string& text) {
    fail(loc, key,
         "value " + text + " is out of range" +
             (L::is_signed ? "" : " (must be a non-negative integer)"));
  };
  switch (v.type()) {
    case element_type::INT64: {
      const int64_t x = v.get_int64().value_unsafe();
      if (std::cmp_less(x, L::min()) || std::cmp_greater(x, L::max())) {
        out_of_range(std::to_string(x));
      }
      return static_cast<T>(x);
    }
    case element_type::UINT64: {
      const uint64_t x = v.get_uint64().value_unsafe();
      if (std::cmp_greater(x, L::max())) out_of_range(std::to_string(x));
      return static_cast<T>(x);
    }
    case element_type::DOUBLE: {
      const double d = v.get_double().value_unsafe();
      const double limit = std::ldexp(1.0, L::digits);  // 2^bits, exclusive
      const double low = L::is_signed ? -limit : 0.0;
      if (d != std::trunc(d)) {
        fail(loc, key, "expected an integer, got " + std::to_string(d));
      }
      if (!(d >= low && d < limit)) out_of_range(std::to_string(d));
      return static_cast<T>(d);
    }
    default:
      wrong_type(loc, key, "an integer", v);
  }
}

void read(const Loc& loc, std::string_view key, element v,
          std::optional<double>& out) {
  if (is_number(v.type())) {
    out = number_of(v);
  } else if (v.is_null()) {
    out.reset();
  } else {
    wrong_type(loc, key, "a number", v);
  }
}

template <typename T>
void read_integer(const Loc& loc, std::string_view key, element v,
                  std::optional<T>& out) {
  if (v.is_null()) {
    out.reset();
  } else {
    out = integer_of<T>(loc, key, v);
  }
}

void read(const Loc& loc, std::string_view key, element v,
          std::optional<int>& out) {
  read_integer(loc, key, v, out);
}
void read(const Loc& loc, std::string_view key, element v,
          std::optional<uint32_t>& out) {
  read_integer(loc, key, v, out);
}
void read(const Loc& loc, std::string_view key, element v,
          std::optional<uint64_t>& out) {
  read_integer(loc, key, v, out);
}

void read(const Loc& loc, std::string_view key, element v,
          std::optional<bool>& out) {
  if (v.type() == element_type::BOOL) {
    out = v.get_bool().value_unsafe();
  } else if (v.is_null()) {
    out.reset();
  } else {
    wrong_type(loc, key, "a boolean", v);
  }
}

// Plain strings: null -> "". assign() keeps the string's capacity.
void read(const Loc& loc, std::string_view key, element v, std::string& out) {
  if (v.type() == element_type::STRING) {
    out.assign(v.get_string().value_unsafe());
  } else if (v.is_null()) {
    out.clear();
  } else {
    wrong_type(loc, key, "a string", v);
  }
}

void read(const Loc& loc, std::string_view key, element v,
          std::optional<std::string>& out) {
  if (v.type() == element_type::STRING) {
    const std::string_view s = v.get_string().value_unsafe();
    if (out) {
      out->assign(s);
    } else {
      out.emplace(s);
    }
  } else if (v.is_null()) {
    out.reset();
  } else {
    wrong_type(loc, key, "a string", v);
  }
}

// ["a", "b"]; null -> empty. Reuses the vector's strings.
void read_string_list(const Loc& loc, std::string_view key, element v,
                      std::vector<std::string>& out) {
  if (v.is_null()) {
    out.clear();
    return;
  }
  array arr;
  if (v.get_array().get(arr)) wrong_type(loc, key, "an array of strings", v);
  size_t n = 0;
  for (element e : arr) {
    if (e.type() != element_type::STRING) {
      fail(loc, std::string(key) + "[" + std::to_string(n) + "]",
           std::string("expected a string, got ") + type_name(e.type()));
    }
    if (n == out.size()) out.emplace_back();
    out[n].assign(e.get_string().value_unsafe());
    ++n;
  }
  out.resize(n);
}

void clear(std::optional<double>& v) { v.reset(); }
void clear(std::optional<int>& v) { v.reset(); }
void clear(std::optional<uint32_t>& v) { v.reset(); }
void clear(std::optional<uint64_t>& v) { v.reset(); }
void clear(std::optional<bool>& v) { v.reset(); }
void clear(std::optional<std::string>& v) { v.reset(); }
void clear(std::string& v) { v.clear(); }

// [{...}, ...]; null -> empty. Element i is parsed into out[i] (reused).
template <typename T, typename ParseOne>
void read_object_array(const Loc& loc, std::string_view key, element v,
                       std::vector<T>& out, ParseOne parse_one) {
  if (v.is_null()) {
    out.clear();
    return;
  }
  array arr;
  if (v.get_array().get(arr)) wrong_type(loc, key, "an array", v);
  size_t n = 0;
  for (element e : arr) {
    const Loc item = loc.child(key, n);
    object obj;
    if (e.get_object().get(obj)) wrong_type(item, "", "an object", e);
    if (n == out.size()) out.emplace_back();
    parse_one(item, obj, out[n]);
    ++n;
  }
  out.resize(n);
}

// ---- field tables ----------------------------------------------------------
//
// Each object's fields are listed once, in the order the writer writes them,
// as X(json_name, how): `plain` fields have the same name in JSON and in the
// model struct and are read by the read() overload for their type; `custom`
// fields are handled by hand. From the list come an enum, the key names, the
// reset of plain fields and their switch cases.

#define GD_KEY_ENUM(name, how) name,
#define GD_KEY_NAME(name, how) #name,
#define GD_CLEAR_plain(name) clear(o.name);
#define GD_CLEAR_custom(name)
#define GD_CLEAR(name, how) GD_CLEAR_##how(name)
#define GD_CASE_plain(name)            \
  case Key::name:                      \
    read(loc, f.key, f.value, o.name); \
    break;
#define GD_CASE_custom(name)
#define GD_CASE(name, how) GD_CASE_##how(name)
// `gpm` fields: flat in JSON, members of the object's GpmActivity `gpm`.
#define GD_CLEAR_gpm(name) clear(o.gpm.name);
#define GD_CASE_gpm(name)                  \
  case Key::name:                          \
    read(loc, f.key, f.value, o.gpm.name); \
    break;
#define GD_GPM_FIELDS(X)    \
  X(sm_active_pct, gpm)     \
  X(sm_occupancy_pct, gpm)  \
  X(tensor_active_pct, gpm) \
  X(dram_active_pct, gpm)   \
  X(fp64_active_pct, gpm)   \
  X(fp32_active_pct, gpm)   \
  X(fp16_active_pct, gpm)   \
  X(gr_engine_active_pct, gpm)

inline uint64_t load64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

inline uint32_t load32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Field names are short: compared inline, a few bytes at a time, rather
// than through a memcmp call per key (6% of `diagnose --from`'s CPU). Two
// overlapping loads cover lengths between one load and two.
inline bool same_key(std::string_view a, std::string_view b) {
  const size_t n = a.size();
  if (n != b.size()) return false;
  const char* x = a.data();
  const char* y = b.data();
  if (n < 4) {
    for (size_t i = 0; i < n; ++i)
      if (x[i] != y[i]) return false;
    return true;
  }
  if (n <= 8)
    return load32(x) == load32(y) && load32(x + n - 4) == load32(y + n - 4);
  for (size_t i = 0; i + 8 < n; i += 8)
    if (load64(x + i) != load64(y + i)) return false;
  return load64(x + n - 8) == load64(y + n - 8);
}

// Finds a key's position in `names`. Lines written by our writer have their
// keys in table order, leaving out the unknown ones, so the search starts at
// the key after the last one found and wraps around: a line in table order
// costs one comparison per key plus one per key left out.
template <size_t N>
int find_key(const std::string_view (&names)[N], std::string_view key,
             size_t& cursor) {
  for (size_t n = 0, i = cursor; n < N; ++n, i = i + 1 < N ? i + 1 : 0) {
    if (same_key(names[i], key)) {
      cursor = i + 1 < N ? i + 1 : 0;
      return static_cast<int>(i);
    }
  }
  return -1;
}

// ---- sample ----------------------------------------------------------------

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

// An optional array of objects: null or absent = nullopt.
template <typename T, typename ParseOne>
void read_optional_array(const Loc& loc, std::string_view key, element v,
                         std::optional<std::vector<T>>& out, bool& have,
                         ParseOne parse_one) {
  if (v.is_null()) return;
  if (!out) out.emplace();
  read_object_array(loc, key, v, *out, parse_one);
  have = true;
}

bool read_flag(const Loc& loc, std::string_view key, element v) {
  std::optional<bool> b;
  read(loc, key, v, b);
  return b.value_or(false);
}

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
  if (o.lost || o.stale) {
    // A lost/stale GPU has no readings, whatever else the line holds.
    GpuSample marker;
    marker.index = o.index;
    marker.lost = o.lost;
    marker.stale = o.stale;
    o = std::move(marker);
  }
}

#define GD_HOST_SAMPLE_FIELDS(X)            \
  X(cpu_util_pct, plain)                    \
  X(cpu_iowait_pct, plain)                  \
  X(cpu_steal_pct, plain)                   \
  X(load1, plain)                           \
  X(mem_available_bytes, plain)             \
  X(swap_used_bytes, plain)                 \
  X(swap_in_pages_per_s, plain)             \
  X(swap_out_pages_per_s, plain)            \
  X(disk_read_bytes_per_s, plain)           \
  X(disk_write_bytes_per_s, plain)          \
  X(disk_busy_pct, plain)                   \
  X(psi_cpu_some_pct, plain)                \
  X(psi_mem_some_pct, plain)                \
  X(psi_io_some_pct, plain)                 \
  X(kernel_lines_unclassified_total, plain) \
  X(other_cpu_top, custom)

#define GD_OTHER_CPU_FIELDS(X) \
  X(pid, custom)               \
  X(comm, plain)               \
  X(user, plain)               \
  X(container, plain)          \
  X(cpu_pct, custom)

void parse_other_cpu(const Loc& loc, object obj, OtherCpuProcess& o) {
  enum class Key { GD_OTHER_CPU_FIELDS(GD_KEY_ENUM) };
  static constexpr std::string_view kNames[] = {
      GD_OTHER_CPU_FIELDS(GD_KEY_NAME)};
  GD_OTHER_CPU_FIELDS(GD_CLEAR)
  bool have_pid = false, have_cpu = false;
  size_t cursor = 0;
  for (auto f : obj) {
    switch (static_cast<Key>(find_key(kNames, f.key, cursor))) {
      GD_OTHER_CPU_FIELDS(GD_CASE)
      case Key::pid:
        o.pid = integer_of<uint32_t>(loc, f.key, f.value);
        have_pid = true;
        break;
      case Key::cpu_pct:  // required: the list is sorted by it
        if (!is_number(f.value.type()))
          wrong_type(loc, f.key, "a number", f.value);
        o.cpu_pct = number_of(f.value);
        have_cpu = true;
        break;
    }
  }
  if (!have_pid) missing(loc, "pid");
  if (!have_cpu) missing(loc, "cpu_pct");
}

void clear_host_sample(HostSample& o) {
  GD_HOST_SAMPLE_FIELDS(GD_CLEAR)
  o.other_cpu_top.reset();
}

[[gnu::flatten]] void parse_host_sample(const Loc& parent, element v,
                                        HostSample& o) {
  enum class Key { GD_HOST_SAMPLE_FIELDS(GD_KEY_ENUM) };
  static constexpr std::string_view kNames[] = {
      GD_HOST_SAMPLE_FIELDS(GD_KEY_NAME)};
  clear_host_sample(o);
  if (v.is_null()) return;
  object obj;
  if (v.get_object().get(obj)) wrong_type(parent, "host", "an object", v);
  const Loc loc = parent.member("host");
  size_t cursor = 0;
  for (auto f : obj) {
    switch (static_cast<Key>(find_key(kNames, f.key, cursor))) {
      GD_HOST_SAMPLE_FIELDS(GD_CASE)
      case Key::other_cpu_top:
        if (f.value.is_null()) break;
        o.other_cpu_top.emplace();
        read_object_array(loc, f.key, f.value, *o.other_cpu_top,
                          parse_other_cpu);
        // At most kOtherCpuTopMax by contract; a longer list is hostile.
        if (o.other_cpu_top->size() > kOtherCpuTopMax)
          o.other_cpu_top->resize(kOtherCpuTopMax);
        break;
    }
  }
}

#define GD_PROCESS_FIELDS(X) \
  X(pid, custom)             \
  X(ppid, plain)             \
  X(user, plain)             \
  X(name, plain)             \
  X(cmdline, plain)          \
  X(state, plain)            \
  X(cpu_pct, plain)          \
  X(threads, plain)          \
  X(rss_bytes, plain)        \
  X(cgroup, plain)           \
  X(libs, custom)            \
  X(start_time, plain)       \
  X(dev_shm_bytes, plain)    \
  X(ns_pid, plain)

[[gnu::flatten]] void parse_process(const Loc& loc, object obj,
                                    ProcessSample& o) {
  enum class Key { GD_PROCESS_FIELDS(GD_KEY_ENUM) };
  static constexpr std::string_view kNames[] = {GD_PROCESS_FIELDS(GD_KEY_NAME)};
  GD_PROCESS_FIELDS(GD_CLEAR)
  bool have_pid = false, have_libs = false;
  size_t cursor = 0;
  for (auto f : obj) {
    switch (static_cast<Key>(find_key(kNames, f.key, cursor))) {
      GD_PROCESS_FIELDS(GD_CASE)
      case Key::pid:
        o.pid = integer_of<uint32_t>(loc, f.key, f.value);
        have_pid = true;
        break;
      case Key::libs:
        read_string_list(loc, f.key, f.value, o.libs);
        have_libs = true;
        break;
    }
  }
  if (!have_pid) missing(loc, "pid");
  if (!have_libs) o.libs.clear();
}

#define GD_EVENT_FIELDS(X) \
  X(kind, custom)          \
  X(gpu, plain)            \
  X(code, plain)           \
  X(pid, plain)            \
  X(text, plain)           \
  X(severity, plain)       \
  X(pci_address, plain)

void parse_event(const Loc& loc, object obj, Event& o) {
  enum class Key { GD_EVENT_FIELDS(GD_KEY_ENUM) };
  static constexpr std::string_view kNames[] = {GD_EVENT_FIELDS(GD_KEY_NAME)};
  GD_EVENT_FIELDS(GD_CLEAR)
  bool have_kind = false;
  size_t cursor = 0;
  for (auto f : obj) {
    switch (static_cast<Key>(find_key(kNames, f.key, cursor))) {
      GD_EVENT_FIELDS(GD_CASE)
      case Key::kind:
        if (f.value.type() != element_type::STRING) {
          wrong_type(loc, f.key, "a string", f.value);
        }
        o.kind.assign(f.value.get_string().value_unsafe());
        have_kind = true;
        break;
    }
  }
  if (!have_kind) missing(loc, "kind");
}

#define GD_SAMPLE_FIELDS(X) \
  X(t, custom)              \
  X(gpus, custom)           \
  X(host, custom)           \
  X(processes, custom)      \
  X(events, custom)         \
  X(device_holders, custom) \
  X(processes_left_out, custom)

#define GD_DEVICE_HOLDER_FIELDS(X) \
  X(pid, custom)                   \
  X(devices, custom)

void parse_device_holder(const Loc& loc, object obj, DeviceHolder& o) {
  enum class Key { GD_DEVICE_HOLDER_FIELDS(GD_KEY_ENUM) };
  static constexpr std::string_view kNames[] = {
      GD_DEVICE_HOLDER_FIELDS(GD_KEY_NAME)};
  bool have_pid = false;
  o.devices.clear();
  size_t cursor = 0;
  for (auto f : obj) {
    switch (static_cast<Key>(find_key(kNames, f.key, cursor))) {
      case Key::pid:
        o.pid = integer_of<uint32_t>(loc, f.key, f.value);
        have_pid = true;
        break;
      case Key::devices:
        read_string_list(loc, f.key, f.value, o.devices);
        break;
    }
  }
  if (!have_pid) missing(loc, "pid");
}

// ---- header ----------------------------------------------------------------

#define GD_HOST_INFO_FIELDS(X) \
  X(hostname, plain)           \
  X(kernel, plain)             \
  X(cpu_model, plain)          \
  X(cpu_count, plain)          \
  X(mem_total_bytes, plain)    \
  X(swap_total_bytes, plain)   \
  X(pid_namespace, plain)

#define GD_DRIVER_FIELDS(X)       \
  X(driver_version, plain)        \
  X(cuda_driver_version, plain)   \
  X(nvml_version, plain)          \
  X(kernel_module_version, plain) \
  X(library_version, plain)

#define GD_GPU_INFO_FIELDS(X)     \
  X(index, custom)                \
  X(uuid, plain)                  \
  X(name, plain)                  \
  X(pci_bus_id, plain)            \
  X(serial, plain)                \
  X(memory_total_bytes, plain)    \
  X(power_limit_w, plain)         \
  X(power_default_limit_w, plain) \
  X(pcie_max_gen, plain)          \
  X(pcie_max_width, plain)        \
  X(temp_slowdown_c, plain)       \
  X(temp_shutdown_c, plain)       \
  X(sm_clock_max_mhz, plain)      \
  X(mem_clock_max_mhz, plain)     \
  X(compute_capability, plain)    \
  X(architecture, plain)          \
  X(ecc_enabled, plain)           \
  X(mig_enabled, plain)           \
  X(persistence_mode, plain)      \
  X(compute_mode, plain)          \
  X(numa_node, plain)             \
  X(minor_number, plain)          \
  X(temp_max_operating_c, plain)  \
  X(temp_mem_max_c, plain)        \
  X(bar1_total_bytes, plain)      \
  X(vbios_version, plain)         \
  X(nvlink_count, plain)          \
  X(mig_profiles, custom)         \
  X(mig_enabled_pending, plain)

#define GD_HEADER_FIELDS(X) \
  X(format, custom)         \
  X(version, custom)        \
  X(host, custom)           \
  X(nvml_status, plain)     \
  X(nvml_error, plain)      \
  X(driver, custom)         \
  X(gpus, custom)           \
  X(pci_gpus, custom)       \
  X(faults, custom)

// Objects whose fields are all `plain`; `loc` names the object.
void parse_host_info(const Loc& loc, object obj, HostInfo& o) {
  enum class Key { GD_HOST_INFO_FIELDS(GD_KEY_ENUM) };
  static constexpr std::string_view kNames[] = {
      GD_HOST_INFO_FIELDS(GD_KEY_NAME)};
  size_t cursor = 0;
  for (auto f : obj) {
    switch (static_cast<Key>(find_key(kNames, f.key, cursor))) {
      GD_HOST_INFO_FIELDS(GD_CASE)
    }
  }
}

void parse_driver_info(const Loc& loc, object obj, DriverInfo& o) {
  enum class Key { GD_DRIVER_FIELDS(GD_KEY_ENUM) };
  static constexpr std::string_view kNames[] = {GD_DRIVER_FIELDS(GD_KEY_NAME)};
  size_t cursor = 0;
  for (auto f : obj) {
    switch (static_cast<Key>(find_key(kNames, f.key, cursor))) {
      GD_DRIVER_FIELDS(GD_CASE)
    }
  }
}

void parse_gpu_info(const Loc& loc, object obj, GpuInfo& o) {
  enum class Key { GD_GPU_INFO_FIELDS(GD_KEY_ENUM) };
  static constexpr std::string_view kNames[] = {
      GD_GPU_INFO_FIELDS(GD_KEY_NAME)};
  bool have_index = false, have_mig = false;
  size_t cursor = 0;
  for (auto f : obj) {
    switch (static_cast<Key>(find_key(kNames, f.key, cursor))) {
      GD_GPU_INFO_FIELDS(GD_CASE)
      case Key::index:
        o.index = integer_of<int>(loc, f.key, f.value);
        have_index = true;
        break;
      case Key::mig_profiles:
        read_optional_array(loc, f.key, f.value, o.mig_profiles, have_mig,
                            parse_mig_instance);
        break;
    }
  }
  if (!have_mig) o.mig_profiles.reset();
  if (!have_index) missing(loc, "index");
}

#define GD_PCI_GPU_FIELDS(X) \
  X(address, custom)         \
  X(driver, plain)

void parse_pci_gpu(const Loc& loc, object obj, PciGpu& o) {
  enum class Key { GD_PCI_GPU_FIELDS(GD_KEY_ENUM) };
  static constexpr std::string_view kNames[] = {GD_PCI_GPU_FIELDS(GD_KEY_NAME)};
  bool have_address = false;
  size_t cursor = 0;
  for (auto f : obj) {
    switch (static_cast<Key>(find_key(kNames, f.key, cursor))) {
      GD_PCI_GPU_FIELDS(GD_CASE)
      case Key::address:
        if (f.value.type() != element_type::STRING)
          wrong_type(loc, f.key, "a string", f.value);
        o.address.assign(f.value.get_string().value_unsafe());
        have_address = true;
        break;
    }
  }
  if (!have_address) missing(loc, "address");
}

// A sample's processes within `budget`. Past max_processes, only each
// element's pid and ppid are read first and only the elements the budget
// keeps are decoded (in processes_to_keep's order), so a line listing a
// million processes holds what 512 would; the rest are counted.
void read_processes(const Loc& loc, element v, const ProcessBudget& budget,
                    Sample& out) {
  constexpr std::string_view kKey = "processes";
  array arr;
  if (v.is_null() || v.get_array().get(arr) ||
      arr.size() <= budget.max_processes) {
    read_object_array(loc, kKey, v, out.processes, parse_process);
    cap_cmdlines(out.processes, budget);
    return;
  }
  std::vector<std::pair<uint32_t, uint32_t>> pid_ppid;
  size_t i = 0;
  for (element e : arr) {
    const Loc item = loc.child(kKey, i++);
    object obj;
    if (e.get_object().get(obj)) wrong_type(item, "", "an object", e);
    element pid, ppid;
    if (obj["pid"].get(pid)) missing(item, "pid");
    uint32_t parent = 0;
    if (!obj["ppid"].get(ppid) && !ppid.is_null())
      parent = integer_of<uint32_t>(item, "ppid", ppid);
    pid_ppid.emplace_back(integer_of<uint32_t>(item, "pid", pid), parent);
  }
  const std::vector<size_t> keep =
      processes_to_keep(pid_ppid, gpu_process_pids(out), budget.max_processes);
  constexpr size_t kLeftOut = ~size_t{0};
  std::vector<size_t> slot(pid_ppid.size(), kLeftOut);
  for (size_t k = 0; k < keep.size(); ++k) slot[keep[k]] = k;
  out.processes.resize(keep.size());
  i = 0;
  for (element e : arr) {
    if (slot[i] != kLeftOut)
      parse_process(loc.child(kKey, i), e.get_object().value_unsafe(),
                    out.processes[slot[i]]);
    ++i;
  }
  out.processes_left_out += pid_ppid.size() - keep.size();
  cap_cmdlines(out.processes, budget);
}

[[noreturn, gnu::noinline, gnu::cold]] void invalid_json(
    const std::string& where, simdjson::error_code err) {
  throw TraceError(where + ": invalid JSON: " + simdjson::error_message(err));
}

object root_object(simdjson::dom::parser& parser, const char* data, size_t len,
                   const Loc& root) {
  element doc;
  if (auto err = parser.parse(data, len, false).get(doc)) {
    invalid_json(root.where, err);
  }
  object obj;
  if (doc.get_object().get(obj)) {
    fail(root, "",
         std::string("expected a JSON object, got ") + type_name(doc.type()));
  }
  return obj;
}

}  // namespace

void parse_sample(simdjson::dom::parser& parser, const char* data, size_t len,
                  const std::string& where, Sample& out,
                  const ProcessBudget& budget) {
  enum class Key { GD_SAMPLE_FIELDS(GD_KEY_ENUM) };
  static constexpr std::string_view kNames[] = {GD_SAMPLE_FIELDS(GD_KEY_NAME)};
  const Loc loc{where, nullptr, {}, 0};
  const object obj = root_object(parser, data, len, loc);
  bool have_t = false, have_gpus = false, have_host = false,
       have_events = false, have_holders = false;
  // Read after the loop: the budget keeps the GPUs' processes first.
  element processes;
  bool have_processes = false;
  out.processes_left_out = 0;
  size_t cursor = 0;
  for (auto f : obj) {
    switch (static_cast<Key>(find_key(kNames, f.key, cursor))) {
      case Key::t:
        if (!is_number(f.value.type())) {
          wrong_type(loc, f.key, "a number (Unix seconds)", f.value);
        }
        out.t = number_of(f.value);
        have_t = true;
        break;
      case Key::gpus:
        read_object_array(loc, f.key, f.value, out.gpus, parse_gpu_sample);
        have_gpus = true;
        break;
      case Key::host:
        parse_host_sample(loc, f.value, out.host);
        have_host = true;
        break;
      case Key::processes:
        processes = f.value;
        have_processes = true;
        break;
      case Key::processes_left_out:
        if (!f.value.is_null())
          out.processes_left_out = integer_of<uint64_t>(loc, f.key, f.value);
        break;
      case Key::events:
        read_object_array(loc, f.key, f.value, out.events, parse_event);
        have_events = true;
        break;
      case Key::device_holders:
        if (f.value.is_null()) break;
        if (!out.device_holders) out.device_holders.emplace();
        read_object_array(loc, f.key, f.value, *out.device_holders,
                          parse_device_holder);
        have_holders = true;
        break;
    }
  }
  if (!have_t) missing(loc, "t");
  if (!have_gpus) out.gpus.clear();
  if (!have_host) clear_host_sample(out.host);
  if (have_processes)
    read_processes(loc, processes, budget, out);
  else
    out.processes.clear();
  if (!have_events) out.events.clear();
  if (!have_holders) out.device_holders.reset();
  trace_checks::check_sample(out, where);
}

TraceHeader parse_header(simdjson::dom::parser& parser, const char* data,
                         size_t len, const std::string& where) {
  enum class Key { GD_HEADER_FIELDS(GD_KEY_ENUM) };
  static constexpr std::string_view kNames[] = {GD_HEADER_FIELDS(GD_KEY_NAME)};
  const Loc loc{where, nullptr, {}, 0};
  const object obj = root_object(parser, data, len, loc);
  // Check what the line is before reading anything else of it.
  element format_value;
  if (obj["format"].get(format_value)) {
    fail(loc, "",
         "not a gpudoctor trace header (missing \"format\": "
         "\"gpudoctor-trace\")");
  }
  std::string_view format;
  if (format_value.get_string().get(format) || format != "gpudoctor-trace") {
    fail(loc, "format",
         "not a gpudoctor trace header (expected \"format\": "
         "\"gpudoctor-trace\")");
  }
  TraceHeader h;
  TraceHeader& o = h;     // the plain-field cases assign o.<field>
  h.nvml_status.clear();  // absent means unknown, not "ok"
  bool have_version = false;
  size_t cursor = 0;
  for (auto f : obj) {
    switch (static_cast<Key>(find_key(kNames, f.key, cursor))) {
      GD_HEADER_FIELDS(GD_CASE)
      case Key::format:
        break;  // checked above
      case Key::version: {
        h.version = integer_of<int>(loc, f.key, f.value);
        if (h.version > 1) {
          fail(loc, f.key,
               "trace format version " + std::to_string(h.version) +
                   " is newer than this gpudoctor can read (version 1)");
        }
        if (h.version < 1) {
          fail(loc, f.key,
               "trace format version " + std::to_string(h.version) +
                   " does not exist (expected 1)");
        }
        have_version = true;
        break;
      }
      case Key::host: {
        if (f.value.is_null()) break;
        object host;
        if (f.value.get_object().get(host)) {
          wrong_type(loc, f.key, "an object", f.value);
        }
        parse_host_info(loc.member("host"), host, h.host);
        break;
      }
      case Key::driver: {
        if (f.value.is_null()) {
          h.driver.reset();
          break;
        }
        object driver;
        if (f.value.get_object().get(driver)) {
          wrong_type(loc, f.key, "an object", f.value);
        }
        h.driver.emplace();
        parse_driver_info(loc.member("driver"), driver, *h.driver);
        break;
      }
      case Key::gpus:
        read_object_array(loc, f.key, f.value, h.gpus, parse_gpu_info);
        break;
      case Key::pci_gpus:
        if (f.value.is_null()) {
          h.pci_gpus.reset();
          break;
        }
        h.pci_gpus.emplace();
        read_object_array(loc, f.key, f.value, *h.pci_gpus, parse_pci_gpu);
        break;
      case Key::faults:
        if (f.value.is_null()) {
          h.faults_json.clear();
        } else {
          h.faults_json =
              raw_top_level_member(std::string_view(data, len), "faults");
        }
        break;
    }
  }
  if (!have_version) missing(loc, "version");
  trace_checks::check_header(h, where);
  return h;
}

}  // namespace gd::json_in
