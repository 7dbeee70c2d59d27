// Every kernel of burn's PTX runs in the fake as a CPU function whose
// results are those of burn's own CPU reference (written separately), and
// the fake runs exactly the kernels the PTX has.
#include "burn/kernels.h"

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "client_fixture.h"
#include "cpu_kernels.h"
#include "ptx.h"

namespace fake_cuda_test {
namespace {

using namespace gd::cuda;
namespace burn = gd::burn;

std::string read_file(const char* path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::set<std::string> entry_names(const std::string& ptx) {
  std::set<std::string> names;
  std::regex entry(R"(\.entry\s+([A-Za-z_$][A-Za-z0-9_$]*)\s*\()");
  for (std::sregex_iterator it(ptx.begin(), ptx.end(), entry), end; it != end;
       ++it)
    names.insert((*it)[1]);
  return names;
}

TEST(FakeCudaKernels, TheFakeRunsExactlyThePtxEntriesBurnLaunches) {
  const std::string ptx = read_file(BURN_KERNELS_PTX);
  ASSERT_FALSE(ptx.empty()) << BURN_KERNELS_PTX;
  EXPECT_EQ(ptx, burn::kernels_ptx()) << "the embedded PTX is the built one";
  const auto entries = entry_names(ptx);
  std::set<std::string> fake,
      burn_names(burn::kernel_names().begin(), burn::kernel_names().end());
  for (const auto& k : fake_cuda::cpu_kernels()) fake.insert(k.name);
  EXPECT_EQ(entries, fake);
  EXPECT_EQ(entries, burn_names);
  // A conservative target every driver since 2017 JIT-compiles.
  EXPECT_NE(ptx.find("\n.version 6.0\n"), std::string::npos);
  EXPECT_NE(ptx.find("\n.target sm_60\n"), std::string::npos);
  EXPECT_NE(ptx.find("\n.address_size 64\n"), std::string::npos);
  // The fake's PTX reader agrees, parameter list included.
  std::string log;
  auto module = fake_cuda::parse_ptx(ptx, &log);
  ASSERT_TRUE(module) << log;
  for (const auto& e : module->entries) {
    const auto* k = fake_cuda::find_kernel(e.name);
    ASSERT_NE(k, nullptr) << e.name;
    ASSERT_EQ(e.params.size(), k->params.size()) << e.name;
    for (size_t i = 0; i < e.params.size(); ++i)
      EXPECT_EQ(e.params[i], k->params[i]) << e.name;
  }
}

class KernelRun : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(cuda_.fn().cuInit(0), CUDA_SUCCESS);
    ctx_ = std::make_unique<Context>(cuda_.lib(), 0);
    module_ = std::make_unique<Module>(cuda_.lib(), burn::kernels_ptx());
    stream_ = std::make_unique<Stream>(cuda_.lib());
  }
  void TearDown() override {
    stream_.reset();
    module_.reset();
    ctx_.reset();
  }
  template <typename T>
  std::vector<T> read(const DeviceMemory& m, size_t n) {
    std::vector<T> out(n);
    EXPECT_EQ(cuda_.fn().cuMemcpyDtoH_v2(out.data(), m.get(), n * sizeof(T)),
              CUDA_SUCCESS);
    return out;
  }
  template <typename T>
  void write(const DeviceMemory& m, const std::vector<T>& v) {
    EXPECT_EQ(
        cuda_.fn().cuMemcpyHtoD_v2(m.get(), v.data(), v.size() * sizeof(T)),
        CUDA_SUCCESS);
  }
  CUfunction fn(const char* name) { return module_->function(name); }
  const CudaLibrary& lib() { return cuda_.lib(); }

  FakeCuda cuda_;
  std::unique_ptr<Context> ctx_;
  std::unique_ptr<Module> module_;
  std::unique_ptr<Stream> stream_;
};

TEST_F(KernelRun, FmaChainsMatchBurnsReference) {
  const int nseeds = 37, iters = 5, rounds = 3;
  const unsigned grid = 3, block = 64;
  DeviceMemory out32(lib(), grid * block * 4), out64(lib(), grid * block * 8);
  DeviceMemory s32(lib(), nseeds * 4), s64(lib(), nseeds * 8);
  write(s32, burn::fma_seeds_f32(nseeds));
  write(s64, burn::fma_seeds_f64(nseeds));
  launch(lib(), fn(burn::kFmaF32), grid, block, *stream_, out32.get(),
         s32.get(), nseeds, rounds, iters);
  launch(lib(), fn(burn::kFmaF64), grid, block, *stream_, out64.get(),
         s64.get(), nseeds, rounds, iters);
  stream_->synchronize();
  auto r32 = read<uint32_t>(out32, grid * block);
  auto r64 = read<uint64_t>(out64, grid * block);
  const auto seeds32 = burn::fma_seeds_f32(nseeds);
  const auto seeds64 = burn::fma_seeds_f64(nseeds);
  for (unsigned g = 0; g < grid * block; ++g) {
    ASSERT_EQ(r32[g],
              rounds * burn::fma_f32_round_bits(seeds32[g % nseeds], iters))
        << g;
    ASSERT_EQ(r64[g],
              rounds * burn::fma_f64_round_bits(seeds64[g % nseeds], iters))
        << g;
  }
}

TEST_F(KernelRun, MemtestPatternsMatchBurnsAndMismatchesAreLogged) {
  const uint64_t n = 5000;
  const uint32_t cap = 4;
  DeviceMemory buf(lib(), n * 4), log(lib(), burn::error_log_words(cap) * 8);
  for (uint32_t mode = 0; mode <= 4; ++mode) {
    const uint32_t param = 0x1234567u + mode;
    launch(lib(), fn(burn::kMemFill), 7, 128, *stream_, buf.get(), n, mode,
           param);
    stream_->synchronize();
    auto words = read<uint32_t>(buf, n);
    for (uint64_t i = 0; i < n; ++i)
      ASSERT_EQ(words[i], burn::pattern_word(static_cast<burn::Pattern>(mode),
                                             param, buf.get() + 4 * i, i))
          << "mode " << mode << " word " << i;
  }
  // Corrupt two words of the random pattern: the check logs both.
  launch(lib(), fn(burn::kMemFill), 7, 128, *stream_, buf.get(), n, 4u, 99u);
  stream_->synchronize();
  auto words = read<uint32_t>(buf, n);
  words[10] ^= 0x100;
  words[4000] ^= 0x1;
  write(buf, words);
  ASSERT_EQ(
      cuda_.fn().cuMemsetD32_v2(log.get(), 0, burn::error_log_words(cap) * 2),
      CUDA_SUCCESS);
  launch(lib(), fn(burn::kMemCheck), 7, 128, *stream_, buf.get(), n, 4u, 99u,
         log.get(), cap);
  stream_->synchronize();
  auto entries = read<uint64_t>(log, burn::error_log_words(cap));
  ASSERT_EQ(entries[0], 2u);
  std::set<uint64_t> addrs = {entries[1], entries[3]};
  EXPECT_EQ(addrs, (std::set<uint64_t>{buf.get() + 40, buf.get() + 16000}));
  // Moving inversions: every word must hold the value, then holds ~value.
  ASSERT_EQ(cuda_.fn().cuMemsetD32_v2(buf.get(), 0x55555555u, n), CUDA_SUCCESS);
  ASSERT_EQ(
      cuda_.fn().cuMemsetD32_v2(log.get(), 0, burn::error_log_words(cap) * 2),
      CUDA_SUCCESS);
  launch(lib(), fn(burn::kMemInvert), 7, 128, *stream_, buf.get(), n,
         0x55555555u, log.get(), cap);
  launch(lib(), fn(burn::kMemInvert), 7, 128, *stream_, buf.get(), n,
         0xAAAAAAAAu, log.get(), cap);
  stream_->synchronize();
  EXPECT_EQ(read<uint64_t>(log, 1)[0], 0u);
  EXPECT_EQ(read<uint32_t>(buf, n)[123], 0x55555555u);
}

TEST_F(KernelRun, GemmOperandsAndCheckMatchBurnsProductTable) {
  const uint64_t rows = 7, cols = 6, k = 9;
  DeviceMemory a(lib(), rows * k * 2);
  launch(lib(), fn(burn::kGemmFillF16), 2, 32, *stream_, a.get(), rows,
         rows * k, burn::kGemmACoefR, burn::kGemmACoefC);
  stream_->synchronize();
  auto halves = read<uint16_t>(a, rows * k);
  const uint16_t kHalf[5] = {0xC000, 0xBC00, 0, 0x3C00, 0x4000};
  for (uint64_t i = 0; i < rows * k; ++i)
    ASSERT_EQ(halves[i],
              kHalf[burn::gemm_operand(i % rows, i / rows, 1, 1) + 2])
        << i;
  // C as the GPU would compute it, then one element wrong.
  auto table = burn::gemm_product_table(k);
  std::vector<float> c(rows * cols);
  for (uint64_t i = 0; i < rows * cols; ++i) {
    float sum = 0;
    for (uint64_t x = 0; x < k; ++x)
      sum += static_cast<float>(burn::gemm_operand(i % rows, x, 1, 1) *
                                burn::gemm_operand(x, i / rows, 3, 1));
    c[i] = sum;
    ASSERT_EQ(c[i], table[(i % rows) % 5 + 5 * ((i / rows) % 5)]) << i;
  }
  c[17] += 1;
  DeviceMemory cm(lib(), c.size() * 4), tm(lib(), 25 * 4),
      log(lib(), burn::error_log_words(8) * 8);
  write(cm, c);
  write(tm, std::vector<float>(table.begin(), table.end()));
  ASSERT_EQ(
      cuda_.fn().cuMemsetD32_v2(log.get(), 0, burn::error_log_words(8) * 2),
      CUDA_SUCCESS);
  launch(lib(), fn(burn::kGemmCheck), 2, 32, *stream_, cm.get(), rows,
         rows * cols, tm.get(), log.get(), 8u);
  stream_->synchronize();
  auto entries = read<uint64_t>(log, 3);
  EXPECT_EQ(entries[0], 1u);
  EXPECT_EQ(entries[1], cm.get() + 17 * 4);
}

}  // namespace
}  // namespace fake_cuda_test
