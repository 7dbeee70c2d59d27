#include "store/block_codec.h"

#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <map>

#include "trace/trace_io.h"

namespace gd::store {
namespace {

// Format of the numeric stream; a decoder refuses other versions.
constexpr uint64_t kNumericFormat = 1;
// Doubles with at most this many decimals are stored as scaled integers.
// Six covers every reading NVML and /proc give (at most 2-3 decimals) with
// room to spare; beyond that 10^k * v exceeds 2^53 for large values anyway.
constexpr int kMaxDecimals = 6;
// A decompressed block larger than this is corruption, not data: a raw
// block of 8 GPUs is ~1 MiB before compression.
constexpr unsigned long long kMaxBlockBytes = 512ull << 20;

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

// Writes integers as zigzag varints of their `order`-th difference, the
// order chosen to make the stream shortest.
void write_ints(ByteWriter& w, const std::vector<uint64_t>& xs) {
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

void write_column(ByteWriter& w, const std::vector<Cell>& col, bool is_double) {
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
    write_ints(w, ints);
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
    write_ints(w, ints);
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

// Reads one column; with keep == false only moves past it (returns empty).
std::vector<Cell> read_column(ByteReader& r, size_t n, bool keep = true) {
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
    if (kind != kRaw && r.byte() > 2) throw CodecError("bad difference order");
    for (size_t i = 0; i < m; ++i) r.varint();
    return {};
  }
  std::vector<Cell> col(n);
  uint8_t presence = r.byte();
  if (presence == kNone) return col;
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

std::string compress(const std::string& in, int level) {
  std::string out(ZSTD_compressBound(in.size()), '\0');
  size_t n = ZSTD_compress(out.data(), out.size(), in.data(), in.size(), level);
  if (ZSTD_isError(n))
    throw CodecError(std::string("zstd: ") + ZSTD_getErrorName(n));
  out.resize(n);
  return out;
}

std::string decompress(std::string_view in) {
  unsigned long long size = ZSTD_getFrameContentSize(in.data(), in.size());
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN ||
      size > kMaxBlockBytes)
    throw CodecError("not a zstd block");
  std::string out(size, '\0');
  size_t n = ZSTD_decompress(out.data(), out.size(), in.data(), in.size());
  if (ZSTD_isError(n) || n != size)
    throw CodecError(std::string("zstd: ") +
                     (ZSTD_isError(n) ? ZSTD_getErrorName(n) : "short"));
  return out;
}

const GpuSample* find_gpu(const Sample& s, int index) {
  for (const auto& g : s.gpus)
    if (g.index == index) return &g;
  return nullptr;
}

template <typename S>
void write_field_names(ByteWriter& w,
                       const std::vector<NumericField<S>>& fields) {
  w.varint(fields.size());
  for (const auto& f : fields) w.str(f.name);
}

// Maps the block's field names to our table (-1 = a field this version does
// not know: its column is read and dropped).
template <typename S>
std::vector<int> read_field_names(ByteReader& r,
                                  int (*find)(std::string_view)) {
  std::vector<int> map(r.count());
  for (auto& m : map) m = find(r.str());
  return map;
}

template <typename S>
void clear_numeric(S& s, const std::vector<NumericField<S>>& fields) {
  for (const auto& f : fields) set_cell(s, f, Cell{});
}

}  // namespace

namespace {
std::atomic<uint64_t> g_encode_calls{0};
}  // namespace

uint64_t encode_block_calls() { return g_encode_calls.load(); }

EncodedBlock encode_block(std::span<const Sample> samples, int zstd_level) {
  ++g_encode_calls;
  const size_t n = samples.size();
  ByteWriter w;
  w.varint(kNumericFormat);
  w.varint(n);
  std::vector<Cell> col(n);
  for (size_t i = 0; i < n; ++i) col[i] = Cell{true, true, samples[i].t, 0};
  write_column(w, col, true);

  write_field_names(w, gpu_fields());
  write_field_names(w, host_fields());
  std::vector<int> indices;
  for (const auto& s : samples)
    for (const auto& g : s.gpus) indices.push_back(g.index);
  std::sort(indices.begin(), indices.end());
  indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
  w.varint(indices.size());
  std::vector<const GpuSample*> rows(n);
  for (int index : indices) {
    w.svarint(index);
    for (size_t i = 0; i < n; ++i) rows[i] = find_gpu(samples[i], index);
    for (const auto& f : gpu_fields()) {
      for (size_t i = 0; i < n; ++i)
        col[i] = rows[i] ? get_cell(*rows[i], f) : Cell{};
      write_column(w, col,
                   std::holds_alternative<opt<double> GpuSample::*>(f.member));
    }
  }
  for (const auto& f : host_fields()) {
    for (size_t i = 0; i < n; ++i) col[i] = get_cell(samples[i].host, f);
    write_column(w, col,
                 std::holds_alternative<opt<double> HostSample::*>(f.member));
  }

  std::string rest;
  Sample r;
  for (const auto& s : samples) {
    r.t = s.t;
    r.gpus = s.gpus;
    for (auto& g : r.gpus) clear_numeric(g, gpu_fields());
    r.processes = s.processes;
    r.events = s.events;
    r.device_holders = s.device_holders;
    append_sample_json(rest, r);
    rest += '\n';
  }
  return {compress(w.data(), zstd_level), compress(rest, zstd_level)};
}

NumericColumns decode_numeric(std::string_view blob, int only_gpu_field,
                              int only_host_field) {
  const bool all = only_gpu_field < 0 && only_host_field < 0;
  std::string raw = decompress(blob);
  ByteReader r(raw);
  if (r.varint() != kNumericFormat) throw CodecError("unknown block format");
  NumericColumns out;
  size_t n = r.count();
  for (const auto& c : read_column(r, n)) {
    if (!c.present || !c.is_double) throw CodecError("bad time column");
    out.t.push_back(c.d);
  }
  auto gmap = read_field_names<GpuSample>(r, find_gpu_field);
  auto hmap = read_field_names<HostSample>(r, find_host_field);
  size_t ngpus = r.count();
  out.gpu.resize(ngpus);
  for (size_t g = 0; g < ngpus; ++g) {
    out.gpu_indices.push_back(static_cast<int>(r.svarint()));
    out.gpu[g].resize(gpu_fields().size());
    for (int f : gmap) {
      bool keep = f >= 0 && (all || f == only_gpu_field);
      auto col = read_column(r, n, keep);
      if (keep) out.gpu[g][f] = std::move(col);
    }
  }
  out.host.resize(host_fields().size());
  for (int f : hmap) {
    bool keep = f >= 0 && (all || f == only_host_field);
    auto col = read_column(r, n, keep);
    if (keep) out.host[f] = std::move(col);
  }
  if (!r.at_end()) throw CodecError("trailing bytes in block");
  return out;
}

std::vector<Sample> decode_block(std::string_view numeric_blob,
                                 std::string_view rest_blob) {
  NumericColumns cols = decode_numeric(numeric_blob);
  std::string rest = decompress(rest_blob);
  const size_t n = cols.t.size();
  std::map<int, size_t> gpu_pos;
  for (size_t g = 0; g < cols.gpu_indices.size(); ++g)
    gpu_pos[cols.gpu_indices[g]] = g;

  std::vector<Sample> out(n);
  size_t begin = 0;
  for (size_t i = 0; i < n; ++i) {
    size_t end = rest.find('\n', begin);
    if (end == std::string::npos)
      throw CodecError("block has fewer samples than its columns");
    try {
      sample_from_json(std::string_view(rest).substr(begin, end - begin),
                       "block", out[i]);
    } catch (const TraceError& e) {
      throw CodecError(e.what());
    }
    begin = end + 1;
    Sample& s = out[i];
    s.t = cols.t[i];
    for (auto& g : s.gpus) {
      auto it = gpu_pos.find(g.index);
      if (it == gpu_pos.end()) continue;
      const auto& gc = cols.gpu[it->second];
      for (size_t f = 0; f < gc.size(); ++f)
        if (!gc[f].empty()) set_cell(g, gpu_fields()[f], gc[f][i]);
    }
    for (size_t f = 0; f < cols.host.size(); ++f)
      if (!cols.host[f].empty())
        set_cell(s.host, host_fields()[f], cols.host[f][i]);
  }
  if (begin != rest.size())
    throw CodecError("block has more samples than its columns");
  return out;
}

}  // namespace gd::store
