// burn's kernels as LLVM IR, run on the CPU thread by thread: the results
// must be those of burn's CPU reference (kernels.h), which the compute and
// memory tests compare GPU results against. This checks the IR that becomes
// the embedded PTX (after opt -O3), not a copy of it.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "burn/kernels.h"

namespace {

thread_local int t_tid, t_ctaid, t_ntid, t_nctaid;

}  // namespace

extern "C" {
int gd_host_tid_x() { return t_tid; }
int gd_host_ctaid_x() { return t_ctaid; }
int gd_host_ntid_x() { return t_ntid; }
int gd_host_nctaid_x() { return t_nctaid; }

// The kernels, compiled for the host from burn_kernels.opt.ll.
void gd_fma_f32(uint32_t* out, const float* seeds, int nseeds, int rounds,
                int iters);
void gd_fma_f64(uint64_t* out, const double* seeds, int nseeds, int rounds,
                int iters);
void gd_mem_fill(uint32_t* base, uint64_t n, uint32_t mode, uint32_t param);
void gd_mem_check(uint32_t* base, uint64_t n, uint32_t mode, uint32_t param,
                  uint64_t* log, uint32_t cap);
void gd_mem_invert(uint32_t* base, uint64_t n, uint32_t expect, uint64_t* log,
                   uint32_t cap);
void gd_gemm_fill_f16(uint16_t* out, uint64_t rows, uint64_t count,
                      uint64_t coef_r, uint64_t coef_c);
void gd_gemm_check(float* c, uint64_t rows, uint64_t count, const float* table,
                   uint64_t* log, uint32_t cap);
}

namespace gd::burn {
namespace {

// Runs `kernel` once per thread of a 1-D grid, as the GPU would (in order).
template <typename Kernel>
void run_grid(int grid, int block, Kernel kernel) {
  t_ntid = block;
  t_nctaid = grid;
  for (t_ctaid = 0; t_ctaid < grid; ++t_ctaid)
    for (t_tid = 0; t_tid < block; ++t_tid) kernel();
}

TEST(BurnKernelsIr, FmaChainsEqualTheReference) {
  const int nseeds = 19, grid = 3, block = 32;
  auto s32 = fma_seeds_f32(nseeds);
  auto s64 = fma_seeds_f64(nseeds);
  for (int iters : {0, 1, 7}) {
    for (int rounds : {0, 1, 3}) {
      std::vector<uint32_t> out32(grid * block, 1);
      std::vector<uint64_t> out64(grid * block, 1);
      run_grid(grid, block, [&] {
        gd_fma_f32(out32.data(), s32.data(), nseeds, rounds, iters);
      });
      run_grid(grid, block, [&] {
        gd_fma_f64(out64.data(), s64.data(), nseeds, rounds, iters);
      });
      for (int g = 0; g < grid * block; ++g) {
        ASSERT_EQ(out32[g],
                  uint32_t(rounds) * fma_f32_round_bits(s32[g % nseeds], iters))
            << "iters " << iters << " rounds " << rounds << " thread " << g;
        ASSERT_EQ(out64[g],
                  uint64_t(rounds) * fma_f64_round_bits(s64[g % nseeds], iters))
            << "iters " << iters << " rounds " << rounds << " thread " << g;
      }
    }
  }
  // The chains stay near their seed (an error anywhere is not damped away,
  // and no value runs off to infinity): one round of 1000 iterations.
  uint32_t bits = fma_f32_round_bits(1.5f, 1000);
  float sum;
  std::memcpy(&sum, &bits, 4);
  EXPECT_NEAR(sum, 8 * 1.5f + (0 + 1 + 2 + 3 + 4 + 5 + 6 + 7) / 16.0f, 0.05f);
}

TEST(BurnKernelsIr, MemtestPatternsEqualTheReferenceAndChecksLogMismatches) {
  const uint64_t n = 3000;
  for (uint32_t mode = 0; mode <= 5; ++mode) {  // 5: unknown = constant
    std::vector<uint32_t> mem(n, 0);
    const uint32_t param = 0xDEAD0000u + mode;
    run_grid(4, 64, [&] { gd_mem_fill(mem.data(), n, mode, param); });
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t addr = reinterpret_cast<uint64_t>(&mem[i]);
      ASSERT_EQ(mem[i],
                pattern_word(static_cast<Pattern>(mode), param, addr, i))
          << "mode " << mode << " word " << i;
    }
    mem[7] ^= 4;
    mem[2999] ^= 0x80000000u;
    std::vector<uint64_t> log(error_log_words(1), 0);
    run_grid(4, 64,
             [&] { gd_mem_check(mem.data(), n, mode, param, log.data(), 1); });
    EXPECT_EQ(log[0], 2u) << "mode " << mode;  // both counted, one kept (cap 1)
    const bool first_kept = log[1] == reinterpret_cast<uint64_t>(&mem[7]);
    EXPECT_TRUE(first_kept || log[1] == reinterpret_cast<uint64_t>(&mem[2999]));
    const uint32_t found = static_cast<uint32_t>(log[2]),
                   expected = log[2] >> 32;
    EXPECT_EQ(found ^ expected, first_kept ? 4u : 0x80000000u);
  }
  // Random patterns differ by seed and by word.
  EXPECT_NE(pattern_word(Pattern::random, 1, 0, 5),
            pattern_word(Pattern::random, 2, 0, 5));
  EXPECT_NE(pattern_word(Pattern::random, 1, 0, 5),
            pattern_word(Pattern::random, 1, 0, 6));
}

TEST(BurnKernelsIr, MovingInversionsCheckThenInvert) {
  const uint64_t n = 500;
  std::vector<uint32_t> mem(n, 0x0F0F0F0Fu);
  mem[42] = 0x0F0F0F0Eu;
  std::vector<uint64_t> log(error_log_words(4), 0);
  run_grid(2, 32,
           [&] { gd_mem_invert(mem.data(), n, 0x0F0F0F0Fu, log.data(), 4); });
  EXPECT_EQ(log[0], 1u);
  EXPECT_EQ(log[1], reinterpret_cast<uint64_t>(&mem[42]));
  EXPECT_EQ(log[2], (uint64_t{0x0F0F0F0Fu} << 32) | 0x0F0F0F0Eu);
  for (uint32_t w : mem) ASSERT_EQ(w, 0xF0F0F0F0u);
}

TEST(BurnKernelsIr, GemmOperandsAndCheckEqualTheReference) {
  const uint64_t rows = 6, k = 11, cols = 7;
  std::vector<uint16_t> a(rows * k), b(k * cols);
  run_grid(2, 16, [&] {
    gd_gemm_fill_f16(a.data(), rows, rows * k, kGemmACoefR, kGemmACoefC);
  });
  run_grid(2, 16, [&] {
    gd_gemm_fill_f16(b.data(), k, k * cols, kGemmBCoefR, kGemmBCoefC);
  });
  auto half_value = [](uint16_t h) {
    switch (h) {
      case 0xC000:
        return -2;
      case 0xBC00:
        return -1;
      case 0x0000:
        return 0;
      case 0x3C00:
        return 1;
      case 0x4000:
        return 2;
    }
    ADD_FAILURE() << "not a small integer half: " << h;
    return 99;
  };
  std::vector<float> c(rows * cols);
  for (uint64_t i = 0; i < rows; ++i)
    for (uint64_t j = 0; j < cols; ++j) {
      int sum = 0;
      for (uint64_t x = 0; x < k; ++x) {
        ASSERT_EQ(half_value(a[i + x * rows]),
                  gemm_operand(i, x, kGemmACoefR, kGemmACoefC));
        sum += half_value(a[i + x * rows]) * half_value(b[x + j * k]);
      }
      c[i + j * rows] = static_cast<float>(sum);
    }
  const auto table = gemm_product_table(k);
  std::vector<uint64_t> log(error_log_words(4), 0);
  run_grid(2, 16, [&] {
    gd_gemm_check(c.data(), rows, rows * cols, table.data(), log.data(), 4);
  });
  EXPECT_EQ(log[0], 0u);
  c[5] = -c[5] - 1;
  run_grid(2, 16, [&] {
    gd_gemm_check(c.data(), rows, rows * cols, table.data(), log.data(), 4);
  });
  EXPECT_EQ(log[0], 1u);
  EXPECT_EQ(log[1], reinterpret_cast<uint64_t>(&c[5]));
}

}  // namespace
}  // namespace gd::burn
