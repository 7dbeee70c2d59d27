#include "burn/kernels.h"

#include <cmath>
#include <cstring>

namespace gd::burn {

namespace {

// The constants of burn_kernels.ll: A = 1 + 2^-10, B = 2^-7, A2 = 1/A and
// B2 = -B*A2, each rounded to the type.
template <typename T>
struct FmaConstants {
  static constexpr T A = T(1) + T(1) / T(1024);
  static constexpr T B = T(1) / T(128);
  static inline const T A2 = T(1) / A;
  static inline const T B2 = -(B * A2);
};

template <typename T, typename Bits>
Bits round_bits(T seed, int iters) {
  using C = FmaConstants<T>;
  T x[8];
  for (int j = 0; j < 8; ++j) x[j] = seed + T(j) / T(16);
  const int steps = iters < 1 ? 1 : iters;
  for (int i = 0; i < steps; ++i)
    for (int u = 0; u < 4; ++u)
      for (T& v : x) {
        v = std::fma(v, C::A, C::B);
        v = std::fma(v, C::A2, C::B2);
      }
  T sum = x[0];
  for (int j = 1; j < 8; ++j) sum = sum + x[j];
  Bits bits;
  std::memcpy(&bits, &sum, sizeof bits);
  return bits;
}

uint32_t fmix32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x85EBCA6Bu;
  x ^= x >> 13;
  x *= 0xC2B2AE35u;
  x ^= x >> 16;
  return x;
}

}  // namespace

const std::vector<std::string>& kernel_names() {
  static const std::vector<std::string> names = {
      kFmaF32,    kFmaF64,      kMemFill,  kMemCheck,
      kMemInvert, kGemmFillF16, kGemmCheck};
  return names;
}

double fma_flops_per_round(int iters) {
  return 2.0 * 2 * 4 * 8 * (iters < 1 ? 1 : iters);
}

uint32_t fma_f32_round_bits(float seed, int iters) {
  return round_bits<float, uint32_t>(seed, iters);
}

uint64_t fma_f64_round_bits(double seed, int iters) {
  return round_bits<double, uint64_t>(seed, iters);
}

std::vector<float> fma_seeds_f32(int n) {
  std::vector<float> s(n);
  for (int k = 0; k < n; ++k)
    s[k] = 1.0f + static_cast<float>(k) / static_cast<float>(n);
  return s;
}

std::vector<double> fma_seeds_f64(int n) {
  std::vector<double> s(n);
  for (int k = 0; k < n; ++k) s[k] = 1.0 + static_cast<double>(k) / n;
  return s;
}

uint32_t pattern_word(Pattern mode, uint32_t param, uint64_t addr, uint64_t i) {
  const uint32_t lo = static_cast<uint32_t>(i);
  switch (mode) {
    case Pattern::walking_ones:
      return 1u << ((lo + param) & 31);
    case Pattern::walking_zeros:
      return ~(1u << ((lo + param) & 31));
    case Pattern::address:
      return static_cast<uint32_t>(addr >> 2) ^ param;
    case Pattern::random: {
      const uint32_t hi = static_cast<uint32_t>(i >> 32);
      return fmix32((lo * 0x9E3779B1u) ^ (hi * 0x85EBCA77u) ^ param);
    }
    case Pattern::constant:
    default:
      return param;
  }
}

int gemm_operand(uint64_t r, uint64_t c, uint64_t coef_r, uint64_t coef_c) {
  return static_cast<int>((r * coef_r + c * coef_c) % 5) - 2;
}

std::array<float, 25> gemm_product_table(uint64_t k) {
  std::array<float, 25> t{};
  for (uint64_t i = 0; i < 5; ++i)
    for (uint64_t j = 0; j < 5; ++j) {
      long long sum = 0;
      for (uint64_t x = 0; x < k; ++x)
        sum += gemm_operand(i, x, kGemmACoefR, kGemmACoefC) *
               gemm_operand(x, j, kGemmBCoefR, kGemmBCoefC);
      t[i + 5 * j] = static_cast<float>(sum);
    }
  return t;
}

}  // namespace gd::burn
