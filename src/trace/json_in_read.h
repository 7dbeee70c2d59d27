// The trace-line parser's shared parts (json_in.h), internal to the trace
// module: where in the line an error is, the scalar readers, the field
// tables and the key search. The parsers of each object are in
// json_in.cc (a sample and its host and processes), json_in_gpu.cc (a GPU's
// sample) and json_in_header.cc (the header); the cold error paths are in
// json_in_read.cc.
#pragma once

#include <simdjson.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/sample.h"

namespace gd::json_in {

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

// "gpus[1].processes[0].pid": the path to `key` under `loc`.
std::string path_of(const Loc& loc, std::string_view key);
[[noreturn, gnu::noinline, gnu::cold]] void fail(const Loc& loc,
                                                 std::string_view key,
                                                 const std::string& what);
const char* type_name(element_type t);
[[noreturn, gnu::noinline, gnu::cold]] void wrong_type(const Loc& loc,
                                                       std::string_view key,
                                                       const char* expected,
                                                       element v);
[[noreturn, gnu::noinline, gnu::cold]] void missing(const Loc& loc,
                                                    std::string_view key);
// The line's top-level object; TraceError when it is not JSON or not an
// object.
object root_object(simdjson::dom::parser& parser, const char* data, size_t len,
                   const Loc& root);

// ---- scalar readers: one overload per model type ---------------------------

inline double number_of(element v) {
  switch (v.type()) {
    case element_type::INT64:
      return static_cast<double>(v.get_int64().value_unsafe());
    case element_type::UINT64:
      return static_cast<double>(v.get_uint64().value_unsafe());
    default:
      return v.get_double().value_unsafe();
  }
}

inline bool is_number(element_type t) {
  return t == element_type::INT64 || t == element_type::UINT64 ||
         t == element_type::DOUBLE;
}

// Integer fields accept JSON integers, and floats with an integral value
// (71.0: some writers only have floats); 71.5 or an out-of-range value is an
// error, never rounded or clamped. One check per kind of JSON number, shared
// by the full parser and the field walk (json_in_fields.cc).
//
// The errors' text is built out of line (json_in_read.cc): the readers are
// flattened into the object parsers, and that text built inline, once per
// field, made the GPU sample's parser the build's slowest file.
[[noreturn, gnu::noinline, gnu::cold]] void integer_out_of_range(
    const Loc& loc, std::string_view key, int64_t x, bool target_is_signed);
[[noreturn, gnu::noinline, gnu::cold]] void integer_out_of_range(
    const Loc& loc, std::string_view key, uint64_t x, bool target_is_signed);
[[noreturn, gnu::noinline, gnu::cold]] void integer_out_of_range(
    const Loc& loc, std::string_view key, double d, bool target_is_signed);
[[noreturn, gnu::noinline, gnu::cold]] void not_an_integer(const Loc& loc,
                                                           std::string_view key,
                                                           double d);

template <typename T>
T integer_from(const Loc& loc, std::string_view key, int64_t x) {
  using L = std::numeric_limits<T>;
  if (std::cmp_less(x, L::min()) || std::cmp_greater(x, L::max()))
    integer_out_of_range(loc, key, x, L::is_signed);
  return static_cast<T>(x);
}

template <typename T>
T integer_from(const Loc& loc, std::string_view key, uint64_t x) {
  using L = std::numeric_limits<T>;
  if (std::cmp_greater(x, L::max()))
    integer_out_of_range(loc, key, x, L::is_signed);
  return static_cast<T>(x);
}

template <typename T>
T integer_from(const Loc& loc, std::string_view key, double d) {
  using L = std::numeric_limits<T>;
  const double limit = std::ldexp(1.0, L::digits);  // 2^bits, exclusive
  const double low = L::is_signed ? -limit : 0.0;
  if (d != std::trunc(d)) not_an_integer(loc, key, d);
  if (!(d >= low && d < limit)) integer_out_of_range(loc, key, d, L::is_signed);
  return static_cast<T>(d);
}

template <typename T>
T integer_of(const Loc& loc, std::string_view key, element v) {
  switch (v.type()) {
    case element_type::INT64:
      return integer_from<T>(loc, key, v.get_int64().value_unsafe());
    case element_type::UINT64:
      return integer_from<T>(loc, key, v.get_uint64().value_unsafe());
    case element_type::DOUBLE:
      return integer_from<T>(loc, key, v.get_double().value_unsafe());
    default:
      wrong_type(loc, key, "an integer", v);
  }
}

inline void read(const Loc& loc, std::string_view key, element v,
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

inline void read(const Loc& loc, std::string_view key, element v,
                 std::optional<int>& out) {
  read_integer(loc, key, v, out);
}
inline void read(const Loc& loc, std::string_view key, element v,
                 std::optional<uint32_t>& out) {
  read_integer(loc, key, v, out);
}
inline void read(const Loc& loc, std::string_view key, element v,
                 std::optional<uint64_t>& out) {
  read_integer(loc, key, v, out);
}

inline void read(const Loc& loc, std::string_view key, element v,
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
inline void read(const Loc& loc, std::string_view key, element v,
                 std::string& out) {
  if (v.type() == element_type::STRING) {
    out.assign(v.get_string().value_unsafe());
  } else if (v.is_null()) {
    out.clear();
  } else {
    wrong_type(loc, key, "a string", v);
  }
}

inline void read(const Loc& loc, std::string_view key, element v,
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
inline void read_string_list(const Loc& loc, std::string_view key, element v,
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

inline void clear(std::optional<double>& v) { v.reset(); }
inline void clear(std::optional<int>& v) { v.reset(); }
inline void clear(std::optional<uint32_t>& v) { v.reset(); }
inline void clear(std::optional<uint64_t>& v) { v.reset(); }
inline void clear(std::optional<bool>& v) { v.reset(); }
inline void clear(std::optional<std::string>& v) { v.reset(); }
inline void clear(std::string& v) { v.clear(); }

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

inline bool read_flag(const Loc& loc, std::string_view key, element v) {
  std::optional<bool> b;
  read(loc, key, v, b);
  return b.value_or(false);
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

// ---- objects parsed in one file and read in another -----------------------

// json_in_gpu.cc
void parse_gpu_sample(const Loc& loc, object obj, GpuSample& o);
void parse_mig_instance(const Loc& loc, object obj, MigInstance& o);
// Every field of `o` unknown but its index and processes (whose storage a
// reader reuses).
void clear_gpu_readings(GpuSample& o);
// A lost or stale GPU keeps only its index and that flag.
void keep_only_marker_if_unread(GpuSample& o);

}  // namespace gd::json_in
