// The block codec is lossless and rejects damaged blobs with CodecError.
#include "store/block_codec.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "store_test_util.h"
#include "trace/model_compare.h"

namespace gd::store {
namespace {

using testing::kT0;
using testing::make_sample;

std::vector<Sample> round_trip(const std::vector<Sample>& in) {
  auto enc = encode_block(in, 3);
  return decode_block(enc.numeric, enc.rest);
}

TEST(BlockCodec, DoublesComeBackBitForBit) {
  const double values[] = {0.1 + 0.2,
                           1e-300,
                           -1e300,
                           123456.789012,
                           0.0,
                           -0.0,
                           std::numeric_limits<double>::denorm_min(),
                           std::numeric_limits<double>::max(),
                           97.0,
                           3.14159265358979,
                           -40.5,
                           1e15 + 0.5};
  std::vector<Sample> in;
  int i = 0;
  for (double v : values) {
    in.push_back(make_sample(kT0 + i, i, 1));
    in.back().gpus[0].power_w = v;
    in.back().host.load1 = v;
    ++i;
  }
  auto out = round_trip(in);
  ASSERT_EQ(out.size(), in.size());
  for (size_t k = 0; k < in.size(); ++k) {
    EXPECT_EQ(std::signbit(*out[k].gpus[0].power_w), std::signbit(values[k]));
    EXPECT_EQ(*out[k].gpus[0].power_w, values[k]);
    EXPECT_EQ(*out[k].host.load1, values[k]);
  }
}

TEST(BlockCodec, IntegersAtTheirLimits) {
  std::vector<Sample> in;
  for (int i = 0; i < 6; ++i) in.push_back(make_sample(kT0 + i, i, 1));
  in[0].gpus[0].energy_mj_total = UINT64_MAX;
  in[1].gpus[0].energy_mj_total = 0;
  in[2].gpus[0].energy_mj_total = UINT64_MAX / 2 + 1;
  in[3].gpus[0].temp_c = std::numeric_limits<int>::min();
  in[4].gpus[0].temp_c = std::numeric_limits<int>::max();
  in[5].gpus[0].temp_c.reset();
  auto out = round_trip(in);
  for (size_t k = 0; k < in.size(); ++k) testing::expect_same(in[k], out[k]);
}

TEST(BlockCodec, GpusThatComeAndGo) {
  std::vector<Sample> in;
  for (int i = 0; i < 20; ++i) {
    in.push_back(make_sample(kT0 + i, i, 1 + i % 4));
    if (i % 5 == 0) std::swap(in.back().gpus.front(), in.back().gpus.back());
  }
  auto out = round_trip(in);
  for (size_t k = 0; k < in.size(); ++k) testing::expect_same(in[k], out[k]);
}

// Every field of the additions to version 1 survives the block: the new
// numbers as columns, the histogram, recovery action, read errors and device
// holders in the rest blob.
TEST(BlockCodec, AdditionsToVersion1ComeBack) {
  std::vector<Sample> in;
  for (int i = 0; i < 5; ++i) {
    Sample s = make_sample(kT0 + i, i, 2);
    GpuSample& g = s.gpus[1];
    g.mem_reserved_bytes = 512ull << 20;
    g.bar1_used_bytes = 7ull << 20;
    g.ecc_sbe_aggregate_total = 100 + i;
    g.ecc_dbe_aggregate_total = 2;
    g.ecc_sram_correctable_aggregate_total = 60;
    g.ecc_sram_uncorrectable_aggregate_total = 1;
    g.ecc_dram_correctable_aggregate_total = 40 + i;
    g.ecc_dram_uncorrectable_aggregate_total = 1;
    g.ecc_sram_correctable_volatile_total = 3;
    g.ecc_sram_uncorrectable_volatile_total = 0;
    g.ecc_dram_correctable_volatile_total = i;
    g.ecc_dram_uncorrectable_volatile_total = 0;
    g.ecc_sram_threshold_exceeded = i == 4;
    g.remapped_rows_correctable_total = 5;
    g.remapped_rows_uncorrectable_total = 1 + i / 3;
    g.row_remap_histogram = RowRemapHistogram{636, 2, 1, 1, 0};
    g.recovery_action = i < 3 ? kRecoveryNone : kRecoveryGpuReset;
    g.temp_limit_margin_c = 20 - i;
    g.read_errors = {"power_w"};
    s.host.kernel_lines_unclassified_total = 9 + i;
    s.device_holders = std::vector<DeviceHolder>{{4319, {"nvidia1"}}};
    in.push_back(std::move(s));
  }
  auto out = round_trip(in);
  ASSERT_EQ(out.size(), in.size());
  for (size_t k = 0; k < in.size(); ++k) testing::expect_same(in[k], out[k]);
  EXPECT_EQ(out[4].gpus[1].recovery_action, kRecoveryGpuReset);
  EXPECT_EQ(*out[4].host.kernel_lines_unclassified_total, 13u);
  ASSERT_TRUE(out[2].device_holders.has_value());
  EXPECT_EQ((*out[2].device_holders)[0].pid, 4319u);
  // The counters are columns, so a history query can read them.
  EXPECT_GE(find_gpu_field("remapped_rows_uncorrectable_total"), 0);
  EXPECT_GE(find_gpu_field("ecc_sram_uncorrectable_aggregate_total"), 0);
  EXPECT_GE(find_gpu_field("temp_limit_margin_c"), 0);
  EXPECT_GE(find_host_field("kernel_lines_unclassified_total"), 0);
}

TEST(BlockCodec, EmptyBlock) { EXPECT_TRUE(round_trip({}).empty()); }

TEST(BlockCodec, DamagedBlobsAreRejected) {
  std::vector<Sample> in;
  for (int i = 0; i < 50; ++i) in.push_back(make_sample(kT0 + i, i, 4));
  auto enc = encode_block(in, 3);
  EXPECT_THROW(decode_block("", enc.rest), CodecError);
  EXPECT_THROW(
      decode_block(enc.numeric.substr(0, enc.numeric.size() / 2), enc.rest),
      CodecError);
  EXPECT_THROW(decode_block(enc.numeric, enc.rest.substr(0, 10)), CodecError);
  // Blocks of different sample counts do not pair up.
  auto other =
      encode_block(std::vector<Sample>(in.begin(), in.begin() + 10), 3);
  EXPECT_THROW(decode_block(enc.numeric, other.rest), CodecError);
  // Every single flipped byte either still decodes or throws CodecError.
  for (size_t pos = 0; pos < enc.numeric.size(); ++pos) {
    std::string bad = enc.numeric;
    bad[pos] = static_cast<char>(bad[pos] ^ 0x5a);
    try {
      decode_numeric(bad);
    } catch (const CodecError&) {
    }
  }
}

TEST(BlockCodec, SteadyReadingsCostAboutAByte) {
  // 600 samples of 8 GPUs with slowly changing readings: the codec must
  // get well below the 8 bytes of a raw double per value.
  std::vector<Sample> in;
  for (int i = 0; i < 600; ++i) in.push_back(make_sample(kT0 + i, i, 8));
  auto enc = encode_block(in, 9);
  size_t values = 0;
  for (const auto& s : in) {
    for (const auto& g : s.gpus)
      for (const auto& f : gpu_fields()) values += get_cell(g, f).present;
    for (const auto& f : host_fields()) values += get_cell(s.host, f).present;
  }
  EXPECT_LT(static_cast<double>(enc.numeric.size()) / values, 1.0);
}

}  // namespace
}  // namespace gd::store

namespace gd::store {
namespace {

TEST(BlockCodec, OneColumnDecodeMatchesTheFullDecode) {
  std::vector<Sample> in;
  for (int i = 0; i < 100; ++i) {
    in.push_back(testing::make_sample(testing::kT0 + i, i, 3));
    if (i % 7 == 0) in.back().gpus[1].power_w.reset();  // masked column
    in.back().gpus[2].power_w = 0.1 * i + 1e-9;         // raw-bits column
  }
  auto enc = encode_block(in, 3);
  auto full = decode_numeric(enc.numeric);
  for (int f = 0; f < static_cast<int>(gpu_fields().size()); ++f) {
    auto one = decode_numeric(enc.numeric, f, -1);
    for (size_t g = 0; g < full.gpu.size(); ++g) {
      ASSERT_EQ(one.gpu[g][f].size(), full.gpu[g][f].size());
      for (size_t i = 0; i < full.gpu[g][f].size(); ++i) {
        EXPECT_EQ(one.gpu[g][f][i].present, full.gpu[g][f][i].present);
        EXPECT_EQ(one.gpu[g][f][i].as_double(), full.gpu[g][f][i].as_double());
      }
      for (int other = 0; other < static_cast<int>(gpu_fields().size());
           ++other)
        if (other != f) {
          EXPECT_TRUE(one.gpu[g][other].empty());
        }
    }
  }
  auto host = decode_numeric(enc.numeric, -1, 0);
  ASSERT_EQ(host.host[0].size(), in.size());
  EXPECT_EQ(host.host[0][3].as_double(), *in[3].host.cpu_util_pct);
}

// The kubelet's GPU allocations ride in the rest blob too: serve's history
// gives diagnose the pods that hold a GPU and run nothing on it.
TEST(BlockCodec, PodAllocationsComeBackAndAbsentStaysAbsent) {
  std::vector<Sample> in;
  for (int i = 0; i < 4; ++i) in.push_back(make_sample(kT0 + i, i, 2));
  in[1].pod_allocations = std::vector<PodAllocation>{};
  in[2].pod_allocations = std::vector<PodAllocation>{
      {0, "GPU-0", 1, "nvidia.com/gpu", "ml", "train-1", "main"},
      {1, "MIG-1", std::nullopt, "nvidia.com/mig-1g.10gb", "infer", "s\"0",
       "server"}};
  in[3].pod_allocations = in[2].pod_allocations;
  auto out = round_trip(in);
  ASSERT_EQ(out.size(), in.size());
  for (size_t k = 0; k < in.size(); ++k)
    EXPECT_EQ(out[k].pod_allocations, in[k].pod_allocations) << k;
  EXPECT_FALSE(out[0].pod_allocations.has_value());
}

// The host's other CPU work is a list, not a number: it rides in the rest
// blob, and a sample that did not look stays "not looked".
TEST(BlockCodec, OtherCpuTopComesBackAndAbsentStaysAbsent) {
  std::vector<Sample> in;
  for (int i = 0; i < 5; ++i) in.push_back(make_sample(kT0 + i, i, 1));
  in[1].host.other_cpu_top = std::vector<OtherCpuProcess>{};
  in[2].host.other_cpu_top = std::vector<OtherCpuProcess>{
      {5120, "yes", "bob", std::nullopt, 99.7},
      {6001, "ffmpeg", "carol", "docker:3c4d5e6f7a8b", 45.25}};
  in[3].host.other_cpu_top = in[2].host.other_cpu_top;
  auto out = round_trip(in);
  ASSERT_EQ(out.size(), in.size());
  for (size_t k = 0; k < in.size(); ++k)
    EXPECT_EQ(out[k].host.other_cpu_top, in[k].host.other_cpu_top) << k;
  EXPECT_FALSE(out[0].host.other_cpu_top.has_value());
  ASSERT_TRUE(out[1].host.other_cpu_top.has_value());
  EXPECT_TRUE(out[1].host.other_cpu_top->empty());
}

}  // namespace
}  // namespace gd::store
