// The trace-line parser for readers that need a few fields (json_in.h's
// SampleFieldsReader): simdjson's On-Demand API reads the fields asked for
// where they lie and steps over the rest without building them, which is
// most of a line (a GPU's sample has ~45 fields; a report reads 4). The
// fields it reads follow the same rules as the full parser (json_in.cc):
// absent or null is unknown, a wrong type names the field, integers are
// never rounded, strings are capped where the full parser caps them.
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/slurm_job_id.h"
#include "common/text_cap.h"
#include "model/process_budget.h"
#include "trace/json_in.h"
#include "trace/json_in_read.h"
#include "trace/trace_checks.h"
#include "trace/trace_io.h"

namespace gd::json_in {
namespace {

namespace od = simdjson::ondemand;

[[noreturn, gnu::noinline, gnu::cold]] void od_invalid(
    const Loc& loc, std::string_view key, simdjson::error_code err) {
  const std::string path = path_of(loc, key);
  throw TraceError(loc.where + ": invalid JSON" +
                   (path.empty() ? std::string() : " at " + path) + ": " +
                   simdjson::error_message(err));
}

// Throws on a simdjson error at `key` under `loc`.
inline void od_check(const Loc& loc, std::string_view key,
                     simdjson::error_code err) {
  if (err) [[unlikely]]
    od_invalid(loc, key, err);
}

[[noreturn, gnu::noinline, gnu::cold]] void od_wrong_type(const Loc& loc,
                                                          std::string_view key,
                                                          const char* expected,
                                                          od::value& v) {
  od::json_type t;
  if (v.type().get(t)) od_invalid(loc, key, simdjson::INCORRECT_TYPE);
  const char* got = "null";
  switch (t) {
    case od::json_type::array:
      got = "an array";
      break;
    case od::json_type::object:
      got = "an object";
      break;
    case od::json_type::number:
      got = "a number";
      break;
    case od::json_type::string:
      got = "a string";
      break;
    case od::json_type::boolean:
      got = "a boolean";
      break;
    case od::json_type::null:
      break;
  }
  fail(loc, key, std::string("expected ") + expected + ", got " + got);
}

inline od::json_type type_at(const Loc& loc, std::string_view key,
                             od::value& v) {
  od::json_type t;
  od_check(loc, key, v.type().get(t));
  return t;
}

inline bool null_at(const Loc& loc, std::string_view key, od::value& v) {
  return type_at(loc, key, v) == od::json_type::null;
}

// Integers as integer_of (json_in_read.h): JSON integers, and floats with
// an integral value; out of range or fractional is an error.
template <typename T>
T od_integer(const Loc& loc, std::string_view key, od::value& v) {
  if (type_at(loc, key, v) != od::json_type::number)
    od_wrong_type(loc, key, "an integer", v);
  od::number n;
  od_check(loc, key, v.get_number().get(n));
  switch (n.get_number_type()) {
    case od::number_type::signed_integer:
      return integer_from<T>(loc, key, n.get_int64());
    case od::number_type::unsigned_integer:
      return integer_from<T>(loc, key, n.get_uint64());
    default:
      return integer_from<T>(loc, key, n.get_double());
  }
}

bool od_flag(const Loc& loc, std::string_view key, od::value& v) {
  switch (type_at(loc, key, v)) {
    case od::json_type::boolean: {
      bool b;
      od_check(loc, key, v.get_bool().get(b));
      return b;
    }
    case od::json_type::null:
      return false;
    default:
      od_wrong_type(loc, key, "a boolean", v);
  }
}

template <typename T>
void od_read(const Loc& loc, std::string_view key, od::value& v,
             std::optional<T>& out) {
  if (null_at(loc, key, v)) {
    out.reset();
  } else {
    out = od_integer<T>(loc, key, v);
  }
}

void od_read(const Loc& loc, std::string_view key, od::value& v,
             std::optional<bool>& out) {
  if (null_at(loc, key, v)) {
    out.reset();
  } else {
    out = od_flag(loc, key, v);
  }
}

void od_read(const Loc& loc, std::string_view key, od::value& v,
             std::optional<double>& out) {
  switch (type_at(loc, key, v)) {
    case od::json_type::number: {
      double d;
      od_check(loc, key, v.get_double().get(d));
      out = d;
      return;
    }
    case od::json_type::null:
      out.reset();
      return;
    default:
      od_wrong_type(loc, key, "a number", v);
  }
}

// A string's text, or nullopt for null.
std::optional<std::string_view> od_text(const Loc& loc, std::string_view key,
                                        od::value& v) {
  switch (type_at(loc, key, v)) {
    case od::json_type::string: {
      std::string_view s;
      od_check(loc, key, v.get_string().get(s));
      return s;
    }
    case od::json_type::null:
      return std::nullopt;
    default:
      od_wrong_type(loc, key, "a string", v);
  }
}

void od_read(const Loc& loc, std::string_view key, od::value& v,
             std::string& out) {
  const auto s = od_text(loc, key, v);
  if (s) {
    out.assign(*s);
  } else {
    out.clear();
  }
}

void od_read(const Loc& loc, std::string_view key, od::value& v,
             std::optional<std::string>& out) {
  const auto s = od_text(loc, key, v);
  if (!s) {
    out.reset();
  } else if (out) {
    out->assign(*s);
  } else {
    out.emplace(*s);
  }
}

// Where the first '"' or '\\' is in the 8 bytes at p (little-endian), or 8:
// each byte equal to one of them becomes zero, and the lowest zero byte is
// found without a branch per byte (a key's length varies, so a byte loop
// mispredicts its exit once per key: a fifth of a GPU's walk).
inline size_t quote_or_backslash_in(const char* p) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  constexpr uint64_t kHigh = 0x8080808080808080ULL;
  uint64_t w;
  std::memcpy(&w, p, sizeof w);
  const uint64_t q = w ^ (kOnes * '"'), b = w ^ (kOnes * '\\');
  const uint64_t hit = ((q - kOnes) & ~q & kHigh) | ((b - kOnes) & ~b & kHigh);
  return hit ? static_cast<size_t>(std::countr_zero(hit)) / 8 : 8;
}

// A field's key as it lies in the line: a key without escapes (all of a
// writer's) is read where it is, not copied out; one with escapes, or
// longer than any field's name, is unescaped. The line is followed by
// SIMDJSON_PADDING readable bytes, so the search for the key's closing
// quote may look that far past any key.
inline std::string_view key_of(const Loc& loc, std::string_view where,
                               od::field& f) {
  const char* raw = f.key().raw();
  if constexpr (std::endian::native == std::endian::little) {
    for (size_t at = 0; at < simdjson::SIMDJSON_PADDING; at += 8) {
      const size_t i = quote_or_backslash_in(raw + at);
      if (i == 8) continue;
      if (raw[at + i] == '"') return {raw, at + i};
      break;  // an escape
    }
  }
  std::string_view key;
  od_check(loc, where, f.unescaped_key().get(key));
  return key;
}

// Iterates the fields of the object `v` (null: none), calling
// on_field(key, value) for each.
template <typename OnField>
void od_fields(const Loc& loc, std::string_view key, od::value& v,
               OnField on_field) {
  if (null_at(loc, key, v)) return;
  od::object obj;
  if (v.get_object().get(obj)) od_wrong_type(loc, key, "an object", v);
  for (auto field : obj) {
    // By reference: copying the field out of its result costs a stalled
    // store-to-load forward per field (~40% of a GPU's walk).
    od_check(loc, key, field.error());
    od::field& f = field.value_unsafe();
    on_field(key_of(loc, key, f), f.value());
  }
}

// Parses each object of the array `v` into out[i] (reused); null: empty.
// false (and stopped) past `max` objects.
template <typename T, typename ParseOne>
bool od_objects(const Loc& loc, std::string_view key, od::value& v,
                std::vector<T>& out, ParseOne parse_one,
                size_t max = SIZE_MAX) {
  size_t n = 0;
  if (!null_at(loc, key, v)) {
    od::array arr;
    if (v.get_array().get(arr)) od_wrong_type(loc, key, "an array", v);
    for (auto item : arr) {
      if (n == max) return false;
      od_check(loc, key, item.error());
      od::value& e = item.value_unsafe();
      const Loc at = loc.child(key, n);
      if (type_at(at, "", e) != od::json_type::object)
        od_wrong_type(at, "", "an object", e);
      if (n == out.size()) out.emplace_back();
      parse_one(at, e, out[n]);
      ++n;
    }
  }
  out.resize(n);
  return true;
}

}  // namespace

// Names looked up by their length first: most keys of a line are fields
// nobody asked for, and most of those have no asked-for name of their
// length, so they cost one look.
class KeyIndex {
 public:
  KeyIndex(std::initializer_list<std::string_view> names) {
    int id = 0;
    for (std::string_view n : names) add(n, id++);
  }
  void add(std::string_view name, int id) {
    if (name.size() < kLongest) by_size_[name.size()].push_back({name, id});
  }
  // The id of `key`, or -1.
  int find(std::string_view key) const {
    if (key.size() >= kLongest) return -1;
    for (const Entry& e : by_size_[key.size()])
      if (same_key(e.name, key)) return e.id;
    return -1;
  }

 private:
  static constexpr size_t kLongest = 48;
  struct Entry {
    std::string_view name;
    int id;
  };
  std::array<std::vector<Entry>, kLongest> by_size_;
};

namespace {

// ---- the GPU fields a reader may name --------------------------------------

template <auto Member>
void set_gpu_number(const Loc& loc, std::string_view key, od::value& v,
                    GpuSample& g) {
  od_read(loc, key, v, g.*Member);
}

template <auto Member>
void set_gpm_number(const Loc& loc, std::string_view key, od::value& v,
                    GpuSample& g) {
  od_read(loc, key, v, g.gpm.*Member);
}

struct GpuNumber {
  std::string_view name;
  SampleFieldsReader::SetGpu set;
};

constexpr GpuNumber kGpuNumbers[] = {
    {"util_pct", &set_gpu_number<&GpuSample::util_pct>},
    {"mem_util_pct", &set_gpu_number<&GpuSample::mem_util_pct>},
    {"mem_used_bytes", &set_gpu_number<&GpuSample::mem_used_bytes>},
    {"temp_c", &set_gpu_number<&GpuSample::temp_c>},
    {"mem_temp_c", &set_gpu_number<&GpuSample::mem_temp_c>},
    {"power_w", &set_gpu_number<&GpuSample::power_w>},
    {"energy_mj_total", &set_gpu_number<&GpuSample::energy_mj_total>},
    {"fan_pct", &set_gpu_number<&GpuSample::fan_pct>},
    {"sm_clock_mhz", &set_gpu_number<&GpuSample::sm_clock_mhz>},
    {"mem_clock_mhz", &set_gpu_number<&GpuSample::mem_clock_mhz>},
    {"pstate", &set_gpu_number<&GpuSample::pstate>},
    {"pcie_tx_bytes_per_s", &set_gpu_number<&GpuSample::pcie_tx_bytes_per_s>},
    {"pcie_rx_bytes_per_s", &set_gpu_number<&GpuSample::pcie_rx_bytes_per_s>},
    {"mem_reserved_bytes", &set_gpu_number<&GpuSample::mem_reserved_bytes>},
    {"bar1_used_bytes", &set_gpu_number<&GpuSample::bar1_used_bytes>},
    {"enc_util_pct", &set_gpu_number<&GpuSample::enc_util_pct>},
    {"dec_util_pct", &set_gpu_number<&GpuSample::dec_util_pct>},
    {"nvlink_tx_bytes_per_s",
     &set_gpu_number<&GpuSample::nvlink_tx_bytes_per_s>},
    {"nvlink_rx_bytes_per_s",
     &set_gpu_number<&GpuSample::nvlink_rx_bytes_per_s>},
    {"sm_active_pct", &set_gpm_number<&GpmActivity::sm_active_pct>},
    {"sm_occupancy_pct", &set_gpm_number<&GpmActivity::sm_occupancy_pct>},
    {"tensor_active_pct", &set_gpm_number<&GpmActivity::tensor_active_pct>},
    {"dram_active_pct", &set_gpm_number<&GpmActivity::dram_active_pct>},
    {"fp64_active_pct", &set_gpm_number<&GpmActivity::fp64_active_pct>},
    {"fp32_active_pct", &set_gpm_number<&GpmActivity::fp32_active_pct>},
    {"fp16_active_pct", &set_gpm_number<&GpmActivity::fp16_active_pct>},
    {"gr_engine_active_pct",
     &set_gpm_number<&GpmActivity::gr_engine_active_pct>},
};

// ---- the objects ------------------------------------------------------------

// Each object's fields read here, X(json_name, how) as json_in_read.h's
// tables: `plain` ones by the od_read() overload for their type, `custom`
// ones by hand.
#define GD_OD_CASE_plain(name)    \
  case Key::name:                 \
    od_read(loc, key, f, o.name); \
    break;
#define GD_OD_CASE_custom(name)
#define GD_OD_CASE(name, how) GD_OD_CASE_##how(name)

#define GD_OD_GPU_PROCESS_FIELDS(X) \
  X(pid, custom)                    \
  X(used_bytes, plain)              \
  X(type, plain)                    \
  X(sm_util_pct, plain)

void od_gpu_process(const Loc& loc, od::value& v, GpuProcess& o) {
  enum class Key { GD_OD_GPU_PROCESS_FIELDS(GD_KEY_ENUM) };
  static const KeyIndex keys{GD_OD_GPU_PROCESS_FIELDS(GD_KEY_NAME)};
  o = GpuProcess{};
  o.type.clear();  // absent is unknown, as in the full parser
  bool have_pid = false;
  od_fields(loc, "", v, [&](std::string_view key, od::value& f) {
    switch (static_cast<Key>(keys.find(key))) {
      GD_OD_GPU_PROCESS_FIELDS(GD_OD_CASE)
      case Key::pid:
        o.pid = od_integer<uint32_t>(loc, key, f);
        have_pid = true;
        break;
    }
  });
  if (!have_pid) missing(loc, "pid");
}

#define GD_OD_POD_FIELDS(X) \
  X(uid, plain)             \
  X(namespace_, custom)     \
  X(name, plain)            \
  X(container, plain)       \
  X(deleted, plain)

void od_pod(const Loc& parent, std::string_view pod_key, od::value& v,
            std::optional<ProcessPod>& out) {
  enum class Key { GD_OD_POD_FIELDS(GD_KEY_ENUM) };
  // "namespace" is C++'s: the key is matched by its JSON name.
  static const KeyIndex keys{"uid", "namespace", "name", "container",
                             "deleted"};
  if (null_at(parent, pod_key, v)) {
    out.reset();
    return;
  }
  ProcessPod& o = out.emplace();
  const Loc loc = parent.member(pod_key);
  od_fields(parent, pod_key, v, [&](std::string_view key, od::value& f) {
    switch (static_cast<Key>(keys.find(key))) {
      GD_OD_POD_FIELDS(GD_OD_CASE)
      case Key::namespace_:
        od_read(loc, key, f, o.namespace_);
        break;
    }
  });
  for (auto* text : {&o.uid, &o.namespace_, &o.name, &o.container})
    if (*text) cap_text(**text, kPodTextMax);
}

// A process's identity and place in the tree (SampleFields::process_tree).
#define GD_OD_PROCESS_FIELDS(X) \
  X(pid, custom)                \
  X(ppid, plain)                \
  X(user, plain)                \
  X(name, plain)                \
  X(cmdline, plain)             \
  X(cgroup, plain)              \
  X(start_time, plain)          \
  X(ns_pid, plain)              \
  X(slurm_job_id, custom)       \
  X(pod, custom)

void od_process(const Loc& loc, od::value& v, ProcessSample& o) {
  enum class Key { GD_OD_PROCESS_FIELDS(GD_KEY_ENUM) };
  static const KeyIndex keys{GD_OD_PROCESS_FIELDS(GD_KEY_NAME)};
  GD_OD_PROCESS_FIELDS(GD_CLEAR)
  // What is not read is unknown.
  o.state.clear();
  o.cpu_pct.reset();
  o.threads.reset();
  o.rss_bytes.reset();
  o.libs.clear();
  o.dev_shm_bytes.reset();
  o.slurm_job_id.reset();
  o.pod.reset();
  bool have_pid = false;
  od_fields(loc, "", v, [&](std::string_view key, od::value& f) {
    switch (static_cast<Key>(keys.find(key))) {
      GD_OD_PROCESS_FIELDS(GD_OD_CASE)
      case Key::pid:
        o.pid = od_integer<uint32_t>(loc, key, f);
        have_pid = true;
        break;
      case Key::slurm_job_id: {
        const auto id = od_text(loc, key, f);
        if (id && !is_slurm_job_id(*id))
          fail(loc, key, "not a Slurm job id (1..10 digits)");
        if (id) o.slurm_job_id.emplace(*id);
        break;
      }
      case Key::pod:
        od_pod(loc, key, f, o.pod);
        break;
    }
  });
  if (!have_pid) missing(loc, "pid");
}

#define GD_OD_SLURM_JOB_FIELDS(X) \
  X(id, custom)                   \
  X(name, plain)                  \
  X(user, plain)                  \
  X(partition, plain)

void od_slurm_job(const Loc& loc, od::value& v, SlurmJob& o) {
  enum class Key { GD_OD_SLURM_JOB_FIELDS(GD_KEY_ENUM) };
  static const KeyIndex keys{GD_OD_SLURM_JOB_FIELDS(GD_KEY_NAME)};
  o = SlurmJob{};
  bool have_id = false;
  od_fields(loc, "", v, [&](std::string_view key, od::value& f) {
    switch (static_cast<Key>(keys.find(key))) {
      GD_OD_SLURM_JOB_FIELDS(GD_OD_CASE)
      case Key::id: {
        const auto id = od_text(loc, key, f);
        if (!id) od_wrong_type(loc, key, "a string", f);
        if (!is_slurm_job_id(*id))
          fail(loc, key, "not a Slurm job id (1..10 digits)");
        o.id.assign(*id);
        have_id = true;
        break;
      }
    }
  });
  if (!have_id) missing(loc, "id");
  cap_text(o.name, kSlurmJobNameMax);
  cap_text(o.user, kSlurmUserMax);
  cap_text(o.partition, kSlurmUserMax);
}

}  // namespace

SampleFieldsReader::SampleFieldsReader(const SampleFields& fields,
                                       const ProcessBudget& budget)
    : process_tree_(fields.process_tree),
      budget_(budget),
      gpu_keys_(std::make_unique<KeyIndex>(
          fields.gpu_processes
              ? std::initializer_list<std::string_view>{"index", "lost",
                                                        "stale", "processes"}
              : std::initializer_list<std::string_view>{"index", "lost",
                                                        "stale"})) {
  for (const std::string& name : fields.gpu) {
    const GpuNumber* found = nullptr;
    for (const GpuNumber& g : kGpuNumbers)
      if (g.name == name) found = &g;
    if (!found)
      throw TraceError("no numeric GPU field \"" + name +
                       "\" can be read from a trace");
    gpu_keys_->add(found->name, kGpuNamed + static_cast<int>(gpu_.size()));
    gpu_.push_back({found->name, found->set});
  }
}

SampleFieldsReader::~SampleFieldsReader() = default;

void SampleFieldsReader::gpu(const Loc& loc, od::value& v, GpuSample& o) const {
  clear_gpu_readings(o);
  bool have_index = false, have_processes = false;
  od_fields(loc, "", v, [&](std::string_view key, od::value& f) {
    const int id = gpu_keys_->find(key);
    switch (id) {
      case -1:
        break;
      case kGpuIndex:
        o.index = od_integer<int>(loc, key, f);
        have_index = true;
        break;
      case kGpuLost:
        o.lost = od_flag(loc, key, f);
        break;
      case kGpuStale:
        o.stale = od_flag(loc, key, f);
        break;
      case kGpuProcesses:
        if (null_at(loc, key, f)) break;
        if (!o.processes) o.processes.emplace();
        od_objects(loc, key, f, *o.processes, od_gpu_process);
        have_processes = true;
        break;
      default:
        gpu_[static_cast<size_t>(id - kGpuNamed)].set(loc, key, f, o);
    }
  });
  if (!have_index) missing(loc, "index");
  if (!have_processes) o.processes.reset();
  keep_only_marker_if_unread(o);
}

void SampleFieldsReader::parse(od::parser& parser,
                               simdjson::dom::parser& full_parser,
                               const char* data, size_t len,
                               const std::string& where, Sample& out) const {
  try {
    if (walk(parser, data, len, where, out)) return;
  } catch (const TraceError&) {
    // The full parser says what is wrong, or reads a line the walk
    // refuses (a key given twice, the first time wrong: the full parser
    // reads the last).
  }
  // Past the budget: the full parser keeps the processes it chooses (the
  // GPUs' first) without holding the others.
  parse_sample(full_parser, data, len, where, out, budget_);
}

bool SampleFieldsReader::walk(od::parser& parser, const char* data, size_t len,
                              const std::string& where, Sample& out) const {
  const Loc loc{where, nullptr, {}, 0};
  od::document doc;
  od_check(
      loc, "",
      parser.iterate(data, len, len + simdjson::SIMDJSON_PADDING).get(doc));
  od::object root;
  if (doc.get_object().get(root))
    throw TraceError(where + ": not a JSON object");
  out.gpus.clear();
  out.host = HostSample{};
  out.processes.clear();
  out.events.clear();
  out.device_holders.reset();
  out.processes_left_out = 0;
  out.slurm_jobs.clear();
  out.pod_allocations.reset();
  bool have_t = false;
  for (auto field : root) {
    od_check(loc, "", field.error());
    od::field& f = field.value_unsafe();
    const std::string_view key = key_of(loc, "", f);
    od::value& v = f.value();
    if (same_key(key, "t")) {
      if (type_at(loc, key, v) != od::json_type::number)
        od_wrong_type(loc, key, "a number (Unix seconds)", v);
      od_check(loc, key, v.get_double().get(out.t));
      have_t = true;
    } else if (same_key(key, "gpus")) {
      od_objects(
          loc, key, v, out.gpus,
          [this](const Loc& at, od::value& e, GpuSample& g) { gpu(at, e, g); });
    } else if (process_tree_ && same_key(key, "processes")) {
      if (!od_objects(loc, key, v, out.processes, od_process,
                      budget_.max_processes))
        return false;
    } else if (same_key(key, "processes_left_out")) {
      if (!null_at(loc, key, v))
        out.processes_left_out = od_integer<uint64_t>(loc, key, v);
    } else if (process_tree_ && same_key(key, "slurm_jobs")) {
      od_objects(loc, key, v, out.slurm_jobs, od_slurm_job);
      if (out.slurm_jobs.size() > kSlurmJobsMax)
        fail(loc, key, "more than " + std::to_string(kSlurmJobsMax) + " jobs");
    }
  }
  if (!have_t) missing(loc, "t");
  apply_process_budget(out, budget_);
  trace_checks::check_sample(out, where);
  return true;
}

}  // namespace gd::json_in
