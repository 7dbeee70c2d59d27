// MIG, NVLink and GPM in the history: GPM activity, NVLink throughput and
// video engines are queryable columns; links, MIG instances and per-process
// utilisation come back whole; the minute tier averages the activity.
#include <gtest/gtest.h>

#include <algorithm>

#include "store/block_codec.h"
#include "store/downsample.h"
#include "store/process_columns.h"
#include "store_test_util.h"
#include "trace/model_compare.h"

namespace gd::store {
namespace {

using testing::export_all;
using testing::kT0;
using testing::make_sample;
using testing::open_store;
using testing::StoreDir;

Sample datacenter_sample(int i) {
  Sample s = make_sample(kT0 + i, i, 2);
  GpuSample& g = s.gpus[1];
  g.gpm.sm_active_pct = 40.5 + i;
  g.gpm.tensor_active_pct = 30;
  g.gpm.gr_engine_active_pct = 95.25;
  g.nvlink_tx_bytes_per_s = 100000000000ull + i;
  g.nvlink_rx_bytes_per_s = 50000000000ull;
  g.dec_util_pct = 17;
  NvLink l;
  l.link = 7;
  l.active = true;
  l.version = 4;
  l.crc_errors_total = 1000 + 50 * i;
  g.nvlinks = std::vector<NvLink>{l};
  g.fabric_state = kFabricCompleted;
  MigInstance m;
  m.gi_id = 1;
  m.profile = "3g.40gb";
  m.uuid = "MIG-x";
  m.mem_total_bytes = 40ull << 30;
  m.mem_used_bytes = (10ull + i) << 30;
  m.gpm.sm_active_pct = 55;
  g.mig_instances = std::vector<MigInstance>{m};
  if (g.processes && !g.processes->empty()) {
    (*g.processes)[0].sm_util_pct = 88;
    (*g.processes)[0].gi_id = 1;
    (*g.processes)[0].ci_id = 0;
  }
  return s;
}

TEST(StoreDatacenter, BlocksKeepEveryDatacenterField) {
  std::vector<Sample> in;
  for (int i = 0; i < 5; ++i) in.push_back(datacenter_sample(i));
  auto enc = encode_block(in, 3);
  auto out = decode_block(enc.numeric, enc.rest);
  ASSERT_EQ(out.size(), in.size());
  for (size_t k = 0; k < in.size(); ++k)
    gd::testing::expect_same(in[k], out[k]);
  for (const char* f :
       {"sm_active_pct", "tensor_active_pct", "gr_engine_active_pct",
        "nvlink_tx_bytes_per_s", "dec_util_pct"})
    EXPECT_GE(find_gpu_field(f), 0) << f;
  // One column read back alone, as a history query does.
  const int f = find_gpu_field("sm_active_pct");
  auto cols = decode_numeric(enc.numeric, f);
  ASSERT_EQ(cols.gpu_indices[1], 1);
  EXPECT_DOUBLE_EQ(cols.gpu[1][static_cast<size_t>(f)][3].as_double(), 43.5);
}

TEST(StoreDatacenter, ProcessUtilisationAndInstanceAreProcessColumns) {
  std::vector<Sample> in;
  for (int i = 0; i < 6; ++i) in.push_back(datacenter_sample(i));
  in[4].gpus[1].processes->at(0).sm_util_pct = 12.5;  // changes mid-block
  const std::vector<int> gpus = {0, 1};
  for (bool util : {true, false}) {  // block format 3, and 2 without them
    SCOPED_TRACE(util ? "format 3" : "format 2");
    ByteWriter w;
    write_processes(w, in, gpus, util);
    ByteReader r(w.data());
    auto pc = read_processes(r, in.size(), gpus, true, util);
    EXPECT_TRUE(r.at_end());
    std::vector<Sample> out = in;
    for (auto& s : out)
      for (auto& g : s.gpus)
        if (g.processes)
          for (auto& p : *g.processes) p = GpuProcess{p.pid, {}, p.type};
    apply_processes(pc, out);
    const GpuProcess& p4 = out[4].gpus[1].processes->at(0);
    const GpuProcess& p5 = out[5].gpus[1].processes->at(0);
    EXPECT_EQ(p5.used_bytes, in[5].gpus[1].processes->at(0).used_bytes);
    if (util) {
      EXPECT_EQ(p4.sm_util_pct, 12.5);
      EXPECT_EQ(p5.sm_util_pct, 88.0);
      EXPECT_EQ(p5.gi_id, 1u);
      EXPECT_EQ(p5.ci_id, 0u);
    } else {
      EXPECT_FALSE(p5.sm_util_pct);
      EXPECT_FALSE(p5.gi_id);
    }
  }
}

TEST(StoreDatacenter, MinuteTierAveragesActivityAndKeepsTheLastLinks) {
  std::vector<Sample> in;
  for (int i = 0; i < 4; ++i) in.push_back(datacenter_sample(i));
  auto out = downsample(in, 60);
  ASSERT_EQ(out.size(), 1u);
  const GpuSample& g = out[0].gpus[1];
  EXPECT_DOUBLE_EQ(*g.gpm.sm_active_pct, 42.0);  // (40.5..43.5) / 4
  EXPECT_DOUBLE_EQ(*g.gpm.tensor_active_pct, 30.0);
  ASSERT_TRUE(g.nvlinks);
  EXPECT_EQ((*g.nvlinks)[0].crc_errors_total, 1150u);  // the last sample's
  ASSERT_TRUE(g.mig_instances);
  EXPECT_EQ((*g.mig_instances)[0].profile, "3g.40gb");
}

TEST(StoreDatacenter, HistoryQueriesAndExportsTheDatacenterFields) {
  StoreDir dir;
  auto store = open_store(dir.path("h.db"));
  std::vector<Sample> in;
  for (int i = 0; i < 5; ++i) in.push_back(datacenter_sample(i));
  for (const auto& s : in) store->append(s);
  store->flush();
  auto names = store->metrics();
  for (const char* want : {"gpu.sm_active_pct", "gpu.fp64_active_pct",
                           "gpu.nvlink_rx_bytes_per_s", "gpu.enc_util_pct"})
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  auto series =
      store->query("gpu.sm_active_pct", std::nullopt, std::nullopt, 0, 1e12, 0);
  ASSERT_EQ(series.size(), 1u);  // GPU 0 has no GPM values
  EXPECT_EQ(series[0].gpu, 1);
  ASSERT_EQ(series[0].points.size(), 5u);
  EXPECT_DOUBLE_EQ(series[0].points[4].v, 44.5);
  auto back = export_all(*store, dir.path("out.jsonl"));
  ASSERT_EQ(back.size(), in.size());
  for (size_t k = 0; k < in.size(); ++k)
    gd::testing::expect_same(in[k], back[k]);
}

}  // namespace
}  // namespace gd::store
