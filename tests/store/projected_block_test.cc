// Projected decoding (store/projected_block.h): the fields a ScanFields
// names come out as decode_block gives them, whatever the processes and
// GPUs do within and across blocks; nothing else is filled.
#include "store/projected_block.h"

#include <gtest/gtest.h>

#include "store/block_codec.h"
#include "store_test_util.h"
#include "trace/model_compare.h"
#include "tracegen/tracegen.h"

namespace gd::store {
namespace {

using testing::kT0;
using testing::make_sample;

ScanFields report_fields() {
  ScanFields f;
  f.gpu = {"util_pct", "power_w", "energy_mj_total", "sm_active_pct"};
  f.gpu_processes = true;
  f.process_tree = true;
  return f;
}

// What the projection of a whole sample holds.
Sample projected(const Sample& whole) {
  Sample s;
  s.t = whole.t;
  for (const GpuSample& w : whole.gpus) {
    GpuSample g;
    g.index = w.index;
    g.lost = w.lost;
    g.stale = w.stale;
    g.util_pct = w.util_pct;
    g.power_w = w.power_w;
    g.energy_mj_total = w.energy_mj_total;
    g.gpm.sm_active_pct = w.gpm.sm_active_pct;
    g.processes = w.processes;
    if (g.processes)
      for (GpuProcess& p : *g.processes) {  // pid, type, memory and SM % only
        p.mem_util_pct.reset();
        p.gi_id.reset();
        p.ci_id.reset();
      }
    s.gpus.push_back(g);
  }
  for (const ProcessSample& w : whole.processes) {
    ProcessSample p;
    p.pid = w.pid;
    p.ppid = w.ppid;
    p.user = w.user;
    p.name = w.name;
    p.cmdline = w.cmdline;
    p.cgroup = w.cgroup;
    p.start_time = w.start_time;
    p.ns_pid = w.ns_pid;
    s.processes.push_back(p);
  }
  return s;
}

// The samples a decoder passes, copied, and whether it said each one has
// the processes of the one before.
std::vector<Sample> decoded(ProjectedBlockDecoder& decoder,
                            const EncodedBlock& enc,
                            std::vector<bool>* same = nullptr) {
  std::vector<Sample> out;
  decoder.decode(enc.numeric, enc.rest,
                 [&out, same](const Sample& s, bool same_processes) {
                   out.push_back(s);
                   if (same) same->push_back(same_processes);
                   return true;
                 });
  return out;
}

// Each block decoded whole and projected, against the projected decoder
// (one decoder for all blocks, as a scan has).
void expect_projection(const std::vector<std::vector<Sample>>& blocks) {
  ProjectedBlockDecoder decoder("test.db", report_fields());
  for (size_t b = 0; b < blocks.size(); ++b) {
    SCOPED_TRACE("block " + std::to_string(b));
    const EncodedBlock enc = encode_block(blocks[b], 3);
    const std::vector<Sample> whole = decode_block(enc.numeric, enc.rest);
    std::vector<bool> same;
    const std::vector<Sample> out = decoded(decoder, enc, &same);
    ASSERT_EQ(out.size(), whole.size());
    size_t said_same = 0;
    for (size_t i = 0; i < whole.size(); ++i) {
      SCOPED_TRACE("sample " + std::to_string(i));
      gd::testing::expect_same(projected(whole[i]), out[i]);
      if (!same[i]) continue;
      ++said_same;
      ASSERT_GT(i, 0u);
      const Sample now = projected(whole[i]), before = projected(whole[i - 1]);
      ASSERT_EQ(now.processes.size(), before.processes.size());
      for (size_t k = 0; k < now.processes.size(); ++k)
        gd::testing::expect_same(now.processes[k], before.processes[k]);
    }
    EXPECT_GT(said_same, 0u);  // steady processes are said to be
  }
}

TEST(ProjectedBlock, GivesTheFieldsOfAWholeDecode) {
  tracegen::Options go;
  go.gpus = 4;
  go.duration_s = 1500;
  auto samples = tracegen::generate_all("input-bound", go, nullptr);
  ASSERT_GT(samples.size(), 1000u);
  // Blocks of different sizes: the reused samples shrink and grow.
  std::vector<std::vector<Sample>> blocks;
  blocks.emplace_back(samples.begin(), samples.begin() + 600);
  blocks.emplace_back(samples.begin() + 600, samples.begin() + 700);
  blocks.emplace_back(samples.begin() + 700, samples.end());
  expect_projection(blocks);
}

TEST(ProjectedBlock, FollowsGpusAndProcessesThatComeAndGo) {
  std::vector<Sample> in;
  for (int i = 0; i < 90; ++i) {
    Sample s = make_sample(kT0 + i, i, 3);
    s.gpus[0].gpm.sm_active_pct = 40.5 + i % 7;
    s.gpus[1].processes->at(0).sm_util_pct = i % 9 * 10.5;
    s.gpus[1].processes->at(0).mem_util_pct = 3;
    s.gpus[1].processes->at(0).gi_id = 1;
    if (i % 10 == 3) {  // lost, then stale: index and flag only
      s.gpus[1] = GpuSample{};
      s.gpus[1].index = 1;
      s.gpus[1].lost = true;
    }
    if (i % 10 == 5) {
      s.gpus[2] = GpuSample{};
      s.gpus[2].index = 2;
      s.gpus[2].stale = true;
    }
    if (i >= 30 && i < 40) s.gpus.pop_back();  // GPU 2 missing
    if (i >= 50) s.gpus[0].processes.reset();  // could not be listed
    if (i % 4 == 0) s.processes.pop_back();
    if (i >= 60) {
      s.processes[0].ppid = 77;
      s.processes[0].cgroup = "/slurm/uid_1000/job_42/step_0";
      s.processes[0].start_time = kT0 - 5.5;
    }
    if (i == 70) std::reverse(s.processes.begin(), s.processes.end());
    s.gpus[0].clock_event_reasons = std::vector<std::string>{
        i % 2 ? "sw_power_cap" : "gpu_idle"};  // lines that differ
    in.push_back(s);
  }
  expect_projection(
      {{in.begin(), in.begin() + 45}, {in.begin() + 45, in.end()}});
}

TEST(ProjectedBlock, FillsNothingElse) {
  std::vector<Sample> in;
  for (int i = 0; i < 5; ++i) in.push_back(make_sample(kT0 + i, i));
  const EncodedBlock enc = encode_block(in, 3);
  ProjectedBlockDecoder decoder("test.db", ScanFields{});
  const std::vector<Sample> out = decoded(decoder, enc);
  ASSERT_EQ(out.size(), 5u);
  Sample expected;
  expected.t = kT0 + 4;
  expected.gpus.resize(2);
  expected.gpus[1].index = 1;
  gd::testing::expect_same(expected, out[4]);
}

TEST(ProjectedBlock, RefusesAFieldItDoesNotKnow) {
  ScanFields f;
  f.gpu = {"util_pct", "no_such_field"};
  EXPECT_THROW(ProjectedBlockDecoder("test.db", f), StoreError);
}

TEST(ProjectedBlock, ACorruptBlockThrows) {
  std::vector<Sample> in;
  for (int i = 0; i < 5; ++i) in.push_back(make_sample(kT0 + i, i));
  EncodedBlock enc = encode_block(in, 3);
  const EncodedBlock fewer = encode_block({in.begin(), in.begin() + 4}, 3);
  ProjectedBlockDecoder decoder("test.db", report_fields());
  size_t passed = 0;
  auto count = [&passed](const Sample&, bool) { return ++passed > 0; };
  EXPECT_ANY_THROW(decoder.decode(enc.numeric, fewer.rest, count));
  EXPECT_ANY_THROW(decoder.decode(fewer.numeric, enc.rest, count));
  EXPECT_ANY_THROW(decoder.decode("not zstd", enc.rest, count));
  EXPECT_EQ(passed, 0u);  // nothing before the throw
}

TEST(ProjectedBlock, StopsWhenAsked) {
  std::vector<Sample> in;
  for (int i = 0; i < 5; ++i) in.push_back(make_sample(kT0 + i, i));
  const EncodedBlock enc = encode_block(in, 3);
  ProjectedBlockDecoder decoder("test.db", report_fields());
  size_t passed = 0;
  EXPECT_FALSE(
      decoder.decode(enc.numeric, enc.rest,
                     [&passed](const Sample&, bool) { return ++passed < 2; }));
  EXPECT_EQ(passed, 2u);
}

}  // namespace
}  // namespace gd::store
