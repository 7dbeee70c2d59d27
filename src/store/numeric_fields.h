// The numeric fields of GpuSample and HostSample as a table (name + member
// pointer), so the codec, the downsampler and query() walk one list instead
// of spelling every field three times. Metric names are "gpu.<name>" and
// "host.<name>" (the metric names of /api/v1/history).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <variant>
#include <vector>

#include "model/sample.h"

namespace gd::store {

// A GPM activity field (GpuSample::gpm.sm_active_pct, ...): the member of
// S that holds the GpmActivity, then the field in it.
template <typename S>
struct GpmFieldRef {
  GpmActivity S::*activity;
  opt<double> GpmActivity::*field;
};

template <typename S>
using FieldMember = std::variant<opt<double> S::*, opt<uint64_t> S::*,
                                 opt<int> S::*, opt<bool> S::*, GpmFieldRef<S>>;

// The optional value a field names in `s`, whichever kind of member it is
// (`s` may be const).
template <typename T, typename S>
auto& field_value(T& s, const GpmFieldRef<S>& m) {
  return (s.*m.activity).*m.field;
}
template <typename T, typename M>
auto& field_value(T& s, M member) {
  return s.*member;
}

template <typename S>
struct NumericField {
  const char* name;
  FieldMember<S> member;
};

const std::vector<NumericField<GpuSample>>& gpu_fields();
const std::vector<NumericField<HostSample>>& host_fields();

// Index into gpu_fields()/host_fields(), or -1.
int find_gpu_field(std::string_view name);
int find_host_field(std::string_view name);

// A value as the codec keeps it: doubles as doubles, integers (uint64 as
// their two's-complement bit pattern, bools as 0/1) as int64.
struct Cell {
  bool present = false;
  bool is_double = false;
  double d = 0;
  int64_t i = 0;
  double as_double() const;
};

// Whether the field holds doubles (its column is encoded as doubles).
template <typename S>
bool is_double_field(const NumericField<S>& f) {
  return std::holds_alternative<opt<double> S::*>(f.member) ||
         std::holds_alternative<GpmFieldRef<S>>(f.member);
}

template <typename S>
Cell get_cell(const S& s, const NumericField<S>& f) {
  Cell c;
  std::visit(
      [&](const auto& member) {
        const auto& v = field_value(s, member);
        if (!v) return;
        c.present = true;
        using T = typename std::decay_t<decltype(v)>::value_type;
        if constexpr (std::is_same_v<T, double>) {
          c.is_double = true;
          c.d = *v;
        } else {
          c.i = static_cast<int64_t>(*v);
        }
      },
      f.member);
  return c;
}

// Sets the field from `c` (absent cell = unknown). Integer fields take c.i,
// or c.d rounded when the cell holds a double; the double field takes c.d,
// or c.i when the cell holds an integer.
template <typename S>
void set_cell(S& s, const NumericField<S>& f, const Cell& c);

}  // namespace gd::store
