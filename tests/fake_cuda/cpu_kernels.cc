#include "cpu_kernels.h"

#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <tuple>

namespace fake_cuda {

namespace {

constexpr int kIllegalAddress = 700;
constexpr int kInvalidValue = 1;

template <typename T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <typename T>
void store(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

// ---- gd_fma_f32 / gd_fma_f64 ----------------------------------------------
// One round from seed s: 8 chains c_j = s + j/16, max(iters,1) x 4 x the
// pair fma(x, A, B), fma(x, A2, B2); the result is the chains' sum in order.
template <typename F>
F fma_round(F s, int32_t iters) {
  const F a = F(1) + F(1) / F(1024), b = F(1) / F(128);
  const F a2 = F(1) / a, b2 = -(b * a2);
  F c[8];
  for (int j = 0; j < 8; ++j) c[j] = s + F(j) / F(16);
  int32_t n = iters > 1 ? iters : 1;
  for (int32_t i = 0; i < n; ++i)
    for (int k = 0; k < 4; ++k)
      for (auto& x : c) x = std::fma(std::fma(x, a, b), a2, b2);
  F sum = c[0];
  for (int j = 1; j < 8; ++j) sum += c[j];
  return sum;
}

// A thread's work depends only on its seed, so each distinct (seed, iters)
// is computed once and kept (bounded).
template <typename F, typename Bits>
Bits round_bits_cached(F s, int32_t iters) {
  static std::mutex mu;
  static std::map<std::pair<Bits, int32_t>, Bits> cache;
  Bits key;
  std::memcpy(&key, &s, sizeof key);
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find({key, iters});
    if (it != cache.end()) return it->second;
  }
  F r = fma_round<F>(s, iters);
  Bits bits;
  std::memcpy(&bits, &r, sizeof bits);
  std::lock_guard<std::mutex> lock(mu);
  if (cache.size() > 65536) cache.clear();
  cache[{key, iters}] = bits;
  return bits;
}

template <typename F, typename Bits>
KernelWork fma_kernel(DeviceMemory& mem, uint64_t threads, const uint64_t* args,
                      const KernelFaults& faults) {
  KernelWork w;
  const uint64_t out = args[0], seeds = args[1];
  const uint32_t nseeds = static_cast<uint32_t>(args[2]);
  const int32_t rounds = static_cast<int32_t>(args[3]),
                iters = static_cast<int32_t>(args[4]);
  if (nseeds == 0) return {kInvalidValue};  // the kernel divides by it
  uint8_t* o = mem.map(out, threads * sizeof(Bits));
  const uint8_t* sp =
      mem.map(seeds, uint64_t{std::min<uint64_t>(nseeds, threads)} * sizeof(F));
  if (!o || !sp) return {kIllegalAddress};
  // Threads with the same seed compute the same thing: once per seed.
  std::vector<Bits> per_seed(std::min<uint64_t>(nseeds, threads), 0);
  if (rounds > 0)
    for (size_t k = 0; k < per_seed.size(); ++k)
      per_seed[k] = static_cast<Bits>(
          static_cast<Bits>(rounds) *
          round_bits_cached<F, Bits>(load<F>(sp + k * sizeof(F)), iters));
  for (uint64_t g = 0; g < threads; ++g) {
    Bits acc = per_seed[static_cast<uint32_t>(g) % nseeds];
    if (faults.compute_errors_left && faults.compute_errors_left->load() > 0 &&
        faults.compute_errors_left->fetch_sub(1) > 0)
      acc ^= 1;
    store<Bits>(o + g * sizeof(Bits), acc);
  }
  const double flops = 2.0 * 2 * 4 * 8 * std::max(iters, int32_t{1}) *
                       std::max(rounds, int32_t{0}) *
                       static_cast<double>(threads);
  (sizeof(F) == 4 ? w.fp32_flops : w.fp64_flops) = flops;
  w.mem_bytes = static_cast<double>(threads) * sizeof(Bits);
  return w;
}

// ---- memtest ----------------------------------------------------------------
uint32_t pattern(uint32_t mode, uint32_t param, uint64_t addr, uint64_t i) {
  uint32_t lo = static_cast<uint32_t>(i), hi = static_cast<uint32_t>(i >> 32);
  switch (mode) {
    case 1:
      return uint32_t{1} << ((lo + param) % 32);
    case 2:
      return ~(uint32_t{1} << ((lo + param) % 32));
    case 3:
      return static_cast<uint32_t>(addr / 4) ^ param;
    case 4: {
      uint32_t x = lo * 2654435761u ^ hi * 2246822519u ^ param;
      x ^= x >> 16;
      x *= 2246822507u;
      x ^= x >> 13;
      x *= 3266489909u;
      x ^= x >> 16;
      return x;
    }
    default:
      return param;
  }
}

// The check kernels' error log: [count, (addr, expected<<32|found) x cap].
struct ErrorLog {
  uint8_t* log;
  uint32_t cap;
  void add(uint64_t addr, uint32_t expected, uint32_t found) {
    uint64_t k = load<uint64_t>(log);
    store<uint64_t>(log, k + 1);
    if (k < cap) {
      store<uint64_t>(log + 8 * (1 + 2 * k), addr);
      store<uint64_t>(log + 8 * (2 + 2 * k), uint64_t{expected} << 32 | found);
    }
  }
};

KernelWork mem_fill(DeviceMemory& mem, uint64_t, const uint64_t* args,
                    const KernelFaults&) {
  const uint64_t base = args[0], n = args[1];
  const uint32_t mode = static_cast<uint32_t>(args[2]),
                 param = static_cast<uint32_t>(args[3]);
  uint8_t* p = n ? mem.map(base, n * 4) : nullptr;
  if (n && !p) return {kIllegalAddress};
  for (uint64_t i = 0; i < n; ++i)
    store<uint32_t>(p + 4 * i, pattern(mode, param, base + 4 * i, i));
  KernelWork w;
  w.mem_bytes = 4.0 * static_cast<double>(n);
  return w;
}

KernelWork mem_check(DeviceMemory& mem, uint64_t, const uint64_t* args,
                     const KernelFaults&) {
  const uint64_t base = args[0], n = args[1];
  const uint32_t mode = static_cast<uint32_t>(args[2]),
                 param = static_cast<uint32_t>(args[3]);
  const uint32_t cap = static_cast<uint32_t>(args[5]);
  uint8_t* p = n ? mem.map(base, n * 4) : nullptr;
  uint8_t* log = mem.map(args[4], 8 * (1 + 2 * uint64_t{cap}));
  if ((n && !p) || !log) return {kIllegalAddress};
  ErrorLog errors{log, cap};
  for (uint64_t i = 0; i < n; ++i) {
    const uint32_t want = pattern(mode, param, base + 4 * i, i);
    const uint32_t found = load<uint32_t>(p + 4 * i);
    if (found != want) errors.add(base + 4 * i, want, found);
  }
  KernelWork w;
  w.mem_bytes = 4.0 * static_cast<double>(n);
  return w;
}

KernelWork mem_invert(DeviceMemory& mem, uint64_t, const uint64_t* args,
                      const KernelFaults&) {
  const uint64_t base = args[0], n = args[1];
  const uint32_t expect = static_cast<uint32_t>(args[2]),
                 cap = static_cast<uint32_t>(args[4]);
  uint8_t* p = n ? mem.map(base, n * 4) : nullptr;
  uint8_t* log = mem.map(args[3], 8 * (1 + 2 * uint64_t{cap}));
  if ((n && !p) || !log) return {kIllegalAddress};
  ErrorLog errors{log, cap};
  for (uint64_t i = 0; i < n; ++i) {
    const uint32_t found = load<uint32_t>(p + 4 * i);
    if (found != expect) errors.add(base + 4 * i, expect, found);
    store<uint32_t>(p + 4 * i, ~expect);
  }
  KernelWork w;
  w.mem_bytes = 8.0 * static_cast<double>(n);
  return w;
}

// ---- GEMM operands and check
// -------------------------------------------------
KernelWork gemm_fill(DeviceMemory& mem, uint64_t, const uint64_t* args,
                     const KernelFaults&) {
  const uint64_t out = args[0], rows = args[1], count = args[2], cr = args[3],
                 cc = args[4];
  if (rows == 0) return {kInvalidValue};
  uint8_t* p = count ? mem.map(out, count * 2) : nullptr;
  if (count && !p) return {kIllegalAddress};
  // IEEE half bits of -2, -1, 0, 1, 2.
  static constexpr uint16_t kHalf[5] = {0xC000, 0xBC00, 0x0000, 0x3C00, 0x4000};
  for (uint64_t i = 0; i < count; ++i)
    store<uint16_t>(p + 2 * i, kHalf[((i % rows) * cr + (i / rows) * cc) % 5]);
  KernelWork w;
  w.mem_bytes = 2.0 * static_cast<double>(count);
  return w;
}

KernelWork gemm_check(DeviceMemory& mem, uint64_t, const uint64_t* args,
                      const KernelFaults&) {
  const uint64_t c = args[0], rows = args[1], count = args[2];
  const uint32_t cap = static_cast<uint32_t>(args[5]);
  if (rows == 0) return {kInvalidValue};
  uint8_t* p = count ? mem.map(c, count * 4) : nullptr;
  uint8_t* table = mem.map(args[3], 25 * 4);
  uint8_t* log = mem.map(args[4], 8 * (1 + 2 * uint64_t{cap}));
  if ((count && !p) || !table || !log) return {kIllegalAddress};
  ErrorLog errors{log, cap};
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t t = (i % rows) % 5 + 5 * ((i / rows) % 5);
    const uint32_t want = load<uint32_t>(table + 4 * t),
                   found = load<uint32_t>(p + 4 * i);
    if (want != found) errors.add(c + 4 * i, want, found);
  }
  KernelWork w;
  w.mem_bytes = 4.0 * static_cast<double>(count);
  return w;
}

}  // namespace

const std::vector<CpuKernel>& cpu_kernels() {
  static const std::vector<CpuKernel> kernels = {
      {"gd_fma_f32",
       {"u64", "u64", "u32", "u32", "u32"},
       fma_kernel<float, uint32_t>},
      {"gd_fma_f64",
       {"u64", "u64", "u32", "u32", "u32"},
       fma_kernel<double, uint64_t>},
      {"gd_mem_fill", {"u64", "u64", "u32", "u32"}, mem_fill},
      {"gd_mem_check", {"u64", "u64", "u32", "u32", "u64", "u32"}, mem_check},
      {"gd_mem_invert", {"u64", "u64", "u32", "u64", "u32"}, mem_invert},
      {"gd_gemm_fill_f16", {"u64", "u64", "u64", "u64", "u64"}, gemm_fill},
      {"gd_gemm_check", {"u64", "u64", "u64", "u64", "u64", "u32"}, gemm_check},
  };
  return kernels;
}

const CpuKernel* find_kernel(std::string_view name) {
  for (const auto& k : cpu_kernels())
    if (name == k.name) return &k;
  return nullptr;
}

}  // namespace fake_cuda
