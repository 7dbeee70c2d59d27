// The numeric fields of GpuSample and HostSample as a table (name + member
// pointer), so the codec, the downsampler and query() walk one list instead
// of spelling every field three times. Metric names are "gpu.<name>" and
// "host.<name>" (the metric names of /api/v1/history).
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>
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

// `v` from `c` (absent cell = unknown). Integer fields take c.i, or c.d
// rounded when the cell holds a double; the double field takes c.d, or c.i
// when the cell holds an integer.
template <typename T>
void assign_cell(opt<T>& v, const Cell& c) {
  if (!c.present) {
    v.reset();
  } else if constexpr (std::is_same_v<T, double>) {
    v = c.is_double ? c.d : static_cast<double>(c.i);
  } else if constexpr (std::is_same_v<T, bool>) {
    v = c.is_double ? c.d != 0 : c.i != 0;
  } else if constexpr (std::is_same_v<T, uint64_t>) {
    v = c.is_double ? static_cast<uint64_t>(std::llround(c.d))
                    : static_cast<uint64_t>(c.i);
  } else {
    v = c.is_double ? static_cast<T>(std::lround(c.d)) : static_cast<T>(c.i);
  }
}

// Sets the field from `c` (assign_cell).
template <typename S>
void set_cell(S& s, const NumericField<S>& f, const Cell& c);

// set_cell for one field, its kind of member resolved once: a block's
// decode sets the same fields of thousands of samples, and a std::visit
// per cell cost a tenth of a week's report.
template <typename S>
class CellSetter {
 public:
  explicit CellSetter(const NumericField<S>& f) {
    std::visit(
        [this](const auto& member) {
          using M = std::decay_t<decltype(member)>;
          if constexpr (std::is_same_v<M, GpmFieldRef<S>>) {
            kind_ = kGpm;
            gpm_ = member;
          } else if constexpr (std::is_same_v<M, opt<double> S::*>) {
            kind_ = kDouble;
            d_ = member;
          } else if constexpr (std::is_same_v<M, opt<uint64_t> S::*>) {
            kind_ = kUint64;
            u_ = member;
          } else if constexpr (std::is_same_v<M, opt<int> S::*>) {
            kind_ = kInt;
            i_ = member;
          } else {
            kind_ = kBool;
            b_ = member;
          }
        },
        f.member);
  }
  void operator()(S& s, const Cell& c) const {
    switch (kind_) {
      case kDouble:
        assign_cell(s.*d_, c);
        break;
      case kUint64:
        assign_cell(s.*u_, c);
        break;
      case kInt:
        assign_cell(s.*i_, c);
        break;
      case kBool:
        assign_cell(s.*b_, c);
        break;
      case kGpm:
        assign_cell(field_value(s, gpm_), c);
        break;
    }
  }

 private:
  enum Kind { kDouble, kUint64, kInt, kBool, kGpm } kind_ = kDouble;
  opt<double> S::*d_ = nullptr;
  opt<uint64_t> S::*u_ = nullptr;
  opt<int> S::*i_ = nullptr;
  opt<bool> S::*b_ = nullptr;
  GpmFieldRef<S> gpm_{};
};

}  // namespace gd::store
