// Columns of the block codec (see column_codec.h).
#include "store/column_codec.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

namespace gd::store {
namespace {

// Doubles with at most this many decimals are stored as scaled integers.
// Six covers every reading NVML and /proc give (at most 2-3 decimals) with
// room to spare; beyond that 10^k * v exceeds 2^53 for large values anyway.
constexpr int kMaxDecimals = 6;
enum Presence : uint8_t { kNone = 0, kAll = 1, kMask = 2 };
// Value kinds: kInt, then kDecimal0 + k for "scaled by 10^k", then kRaw.
constexpr uint8_t kInt = 0;
constexpr uint8_t kDecimal0 = 1;
constexpr uint8_t kRaw = kDecimal0 + kMaxDecimals + 1;

constexpr double kPow10[kMaxDecimals + 1] = {1, 10, 100, 1e3, 1e4, 1e5, 1e6};

int varint_len(uint64_t v) {
  int n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

// A run of one value (block format 2): the value once.
constexpr uint8_t kConstant = 3;

// Writes integers as zigzag varints of their `order`-th difference, the
// order chosen to make the stream shortest; a run of one value as that
// value once (a steady RSS, a constant clock: no bytes per sample).
void write_ints(ByteWriter& w, const std::vector<uint64_t>& xs,
                bool allow_constant) {
  if (allow_constant && xs.size() > 1 &&
      std::all_of(xs.begin(), xs.end(),
                  [&](uint64_t x) { return x == xs[0]; })) {
    w.byte(kConstant);
    w.varint(zigzag(xs[0]));
    return;
  }
  std::vector<uint64_t> diffs[3];
  diffs[0] = xs;
  for (int order = 1; order < 3; ++order) {
    const auto& prev = diffs[order - 1];
    auto& d = diffs[order];
    d.resize(prev.size());
    uint64_t last = 0;
    for (size_t i = 0; i < prev.size(); ++i) {
      d[i] = prev[i] - last;
      last = prev[i];
    }
  }
  int best = 0;
  size_t best_len = SIZE_MAX;
  for (int order = 0; order < 3; ++order) {
    size_t len = 0;
    for (uint64_t v : diffs[order]) len += varint_len(zigzag(v));
    if (len < best_len) {
      best_len = len;
      best = order;
    }
  }
  w.byte(static_cast<uint8_t>(best));
  for (uint64_t v : diffs[best]) w.varint(zigzag(v));
}

std::vector<uint64_t> read_ints(ByteReader& r, size_t m) {
  uint8_t order = r.byte();
  if (order == kConstant) return std::vector<uint64_t>(m, unzigzag(r.varint()));
  if (order > 2) throw CodecError("bad difference order");
  std::vector<uint64_t> xs(m);
  for (auto& x : xs) x = unzigzag(r.varint());
  for (int k = 0; k < order; ++k) {
    uint64_t acc = 0;
    for (auto& x : xs) x = acc += x;
  }
  return xs;
}

// Smallest k with every v == round(v * 10^k) / 10^k exactly, or -1.
int decimal_scale(const std::vector<double>& vs) {
  constexpr double kExactLimit = 9007199254740992.0;  // 2^53
  for (int k = 0; k <= kMaxDecimals; ++k) {
    bool ok = true;
    for (double v : vs) {
      double m = std::nearbyint(v * kPow10[k]);
      if (!(std::fabs(m) < kExactLimit) || m / kPow10[k] != v ||
          (v == 0 && std::signbit(v))) {
        ok = false;
        break;
      }
    }
    if (ok) return k;
  }
  return -1;
}

}  // namespace

void write_column(ByteWriter& w, const std::vector<Cell>& col, bool is_double,
                  bool allow_constant) {
  size_t present = 0;
  for (const auto& c : col) present += c.present;
  if (present == 0) {
    w.byte(kNone);
    return;
  }
  if (present == col.size()) {
    w.byte(kAll);
  } else {
    w.byte(kMask);
    for (size_t i = 0; i < col.size(); i += 8) {
      uint8_t bits = 0;
      for (size_t j = 0; j < 8 && i + j < col.size(); ++j)
        if (col[i + j].present) bits |= 1u << j;
      w.byte(bits);
    }
  }
  std::vector<uint64_t> ints;
  ints.reserve(present);
  if (!is_double) {
    w.byte(kInt);
    for (const auto& c : col)
      if (c.present) ints.push_back(static_cast<uint64_t>(c.i));
    write_ints(w, ints, allow_constant);
    return;
  }
  std::vector<double> ds;
  ds.reserve(present);
  for (const auto& c : col)
    if (c.present) ds.push_back(c.d);
  int k = decimal_scale(ds);
  if (k >= 0) {
    w.byte(static_cast<uint8_t>(kDecimal0 + k));
    for (double d : ds)
      ints.push_back(static_cast<uint64_t>(
          static_cast<int64_t>(std::nearbyint(d * kPow10[k]))));
    write_ints(w, ints, allow_constant);
    return;
  }
  // Gorilla-style: neighbouring doubles share sign, exponent and the top of
  // the mantissa, so their XOR is a small number.
  w.byte(kRaw);
  uint64_t prev = 0;
  for (double d : ds) {
    uint64_t bits = std::bit_cast<uint64_t>(d);
    w.varint(bits ^ prev);
    prev = bits;
  }
}

std::vector<Cell> read_column(ByteReader& r, size_t n, bool keep) {
  if (!keep) {
    uint8_t presence = r.byte();
    if (presence == kNone) return {};
    size_t m = n;
    if (presence == kMask) {
      auto mask = r.bytes((n + 7) / 8);
      m = 0;
      for (size_t i = 0; i < n; ++i)
        m += (static_cast<uint8_t>(mask[i / 8]) >> (i % 8)) & 1;
    } else if (presence != kAll) {
      throw CodecError("bad presence mode");
    }
    uint8_t kind = r.byte();
    if (kind > kRaw) throw CodecError("bad value kind");
    if (kind != kRaw) {
      const uint8_t order = r.byte();
      if (order == kConstant) {
        r.varint();
        return {};
      }
      if (order > 2) throw CodecError("bad difference order");
    }
    r.skip_varints(m);
    return {};
  }
  // A column with no values is returned empty ("no such column"): what it
  // costs to decode is then bounded by the bytes its values take.
  uint8_t presence = r.byte();
  if (presence == kNone) return {};
  r.budget().charge(n, sizeof(Cell) + sizeof(uint64_t), "column cells");
  std::vector<Cell> col(n);
  if (presence == kAll) {
    for (auto& c : col) c.present = true;
  } else if (presence == kMask) {
    auto mask = r.bytes((n + 7) / 8);
    for (size_t i = 0; i < n; ++i)
      col[i].present = (static_cast<uint8_t>(mask[i / 8]) >> (i % 8)) & 1;
  } else {
    throw CodecError("bad presence mode");
  }
  size_t m = 0;
  for (const auto& c : col) m += c.present;
  uint8_t kind = r.byte();
  std::vector<uint64_t> vals;
  if (kind == kRaw) {
    vals.resize(m);
    uint64_t prev = 0;
    for (auto& v : vals) v = prev ^= r.varint();
  } else if (kind <= kDecimal0 + kMaxDecimals) {
    vals = read_ints(r, m);
  } else {
    throw CodecError("bad value kind");
  }
  size_t j = 0;
  for (auto& c : col) {
    if (!c.present) continue;
    uint64_t v = vals[j++];
    if (kind == kInt) {
      c.i = static_cast<int64_t>(v);
    } else if (kind == kRaw) {
      c.is_double = true;
      c.d = std::bit_cast<double>(v);
    } else {
      c.is_double = true;
      c.d = static_cast<double>(static_cast<int64_t>(v)) /
            kPow10[kind - kDecimal0];
    }
  }
  return col;
}

}  // namespace gd::store
