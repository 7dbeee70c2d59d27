// burn's GPU kernels (kernels/burn_kernels.ll, compiled to PTX at build
// time) and what the CPU needs to check their results: the reference values
// of the FMA chains, the memtest patterns, the GEMM operands and product.
// Each function here computes on the CPU exactly what the kernel of the same
// name computes on the GPU (the comments in burn_kernels.ll are the spec).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace gd::burn {

// The PTX module (text, NUL-terminated), as llc wrote it.
const char* kernels_ptx();

inline constexpr const char* kFmaF32 = "gd_fma_f32";
inline constexpr const char* kFmaF64 = "gd_fma_f64";
inline constexpr const char* kMemFill = "gd_mem_fill";
inline constexpr const char* kMemCheck = "gd_mem_check";
inline constexpr const char* kMemInvert = "gd_mem_invert";
inline constexpr const char* kGemmFillF16 = "gd_gemm_fill_f16";
inline constexpr const char* kGemmCheck = "gd_gemm_check";
// Every kernel burn launches, in the order of burn_kernels.ll.
const std::vector<std::string>& kernel_names();

// ---- FMA chains ------------------------------------------------------------
// FLOPs of one round of one thread (an FMA is 2).
double fma_flops_per_round(int iters);
// The bits a round adds to out[g] for seed s.
uint32_t fma_f32_round_bits(float seed, int iters);
uint64_t fma_f64_round_bits(double seed, int iters);
// The seeds burn uploads: seed k = 1 + k / n (exact in both types).
std::vector<float> fma_seeds_f32(int n);
std::vector<double> fma_seeds_f64(int n);

// ---- memtest ---------------------------------------------------------------
enum class Pattern : uint32_t {
  constant = 0,
  walking_ones = 1,
  walking_zeros = 2,
  address = 3,
  random = 4,
};
uint32_t pattern_word(Pattern mode, uint32_t param, uint64_t addr, uint64_t i);

// Error log of gd_mem_check / gd_mem_invert / gd_gemm_check: log[0] counts
// mismatches, entry k (k < cap) is log[1 + 2k] = address, log[2 + 2k] =
// expected << 32 | found.
inline constexpr size_t error_log_words(uint32_t cap) {
  return 1 + 2 * size_t{cap};
}

// ---- GEMM ------------------------------------------------------------------
// Element (r, c) of a gd_gemm_fill_f16 matrix: one of -2..2.
int gemm_operand(uint64_t r, uint64_t c, uint64_t coef_r, uint64_t coef_c);
// Coefficients burn uses: A (m x k) = operand(i, k; 1, 1), B (k x n) =
// operand(k, j; 3, 1).
inline constexpr uint64_t kGemmACoefR = 1, kGemmACoefC = 1;
inline constexpr uint64_t kGemmBCoefR = 3, kGemmBCoefC = 1;
// C = A x B for inner dimension k: C(i, j) depends only on (i mod 5, j mod
// 5); table[(i mod 5) + 5 (j mod 5)], exact integers.
std::array<float, 25> gemm_product_table(uint64_t k);

}  // namespace gd::burn
