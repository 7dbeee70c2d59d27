// Processes stored columnar (store/process_columns.h, block format 2): the
// round trip is exact whatever the processes do within a block, old format-1
// blocks still decode, and a steady process costs little.
#include "store/process_columns.h"

#include <gtest/gtest.h>

#include "store/block_codec.h"
#include "store_test_util.h"
#include "trace/model_compare.h"

namespace gd::store {
namespace {

using testing::kT0;
using testing::make_sample;

std::vector<Sample> columns_round_trip(const std::vector<Sample>& in) {
  auto enc = encode_block(in, 3);
  return decode_block(enc.numeric, enc.rest);
}

void expect_columns_same(const std::vector<Sample>& in,
                         const std::vector<Sample>& out) {
  ASSERT_EQ(in.size(), out.size());
  for (size_t i = 0; i < in.size(); ++i) {
    SCOPED_TRACE("sample " + std::to_string(i));
    gd::testing::expect_same(in[i], out[i]);
  }
}

TEST(ProcessColumns, ProcessesThatComeGoChangeAndRepeatTheirPid) {
  std::vector<Sample> in;
  for (int i = 0; i < 120; ++i) {
    Sample s = make_sample(kT0 + i, i, 3);
    auto& procs = s.processes;
    // A worker that exits at 40 and a new process reusing its pid at 60.
    if (i < 40 || i >= 60) {
      ProcessSample w;
      w.pid = 900;
      w.ppid = 100;
      w.user = i < 40 ? "alice" : "bob";
      w.name = i < 40 ? "pt_data_worker" : "bash";
      w.cmdline = i < 40 ? "python train.py" : "bash";
      w.state = i % 7 == 0 ? "D" : "S";
      if (i % 5) w.cpu_pct = 99.5 - (i % 13) * 0.1;  // unknown now and then
      w.rss_bytes = 4096ull * (1000 + i);
      w.start_time = i < 40 ? kT0 - 100.25 : kT0 + 59.5;
      w.cgroup = "/user.slice/\"quoted\"\n";
      w.ns_pid = 7;
      if (i >= 20) w.slurm_job_id = "1234";  // known from 20 on
      w.dev_shm_bytes = 1ull << 33;
      procs.push_back(w);
    }
    // A process that loads a CUDA library at 80 (a new entry), listed
    // before the others from then on.
    ProcessSample t;
    t.pid = 50;
    t.name = "trainer";
    t.state = "R";
    if (i >= 80) t.libs = {"libcudart.so.12"};
    // Its pod: the cgroup's UID at 90, the runtime's names at 95, deleted
    // at 110 (each a new entry).
    if (i >= 90) {
      ProcessPod pod;
      pod.uid = "0b1c2d3e-0000-4000-8000-111111111111";
      if (i >= 95) {
        pod.namespace_ = "ml";
        pod.name = std::string(253, 'p');
        pod.container = "";
        pod.deleted = i >= 110;
      }
      t.pod = pod;
    }
    if (i >= 80)
      procs.insert(procs.begin(), t);
    else
      procs.push_back(t);
    // GPU 1 cannot list its processes for a while; GPU 2 has none at 100+.
    if (i >= 20 && i < 30) s.gpus[1].processes.reset();
    if (i >= 100) s.gpus[2].processes->clear();
    if (i % 3 == 0)
      s.gpus[0].processes->push_back({900, std::nullopt, "graphics"});
    if (i == 70) std::reverse(procs.begin(), procs.end());
    in.push_back(s);
  }
  expect_columns_same(in, columns_round_trip(in));
}

TEST(ProcessColumns, EmptyAndProcessLessBlocks) {
  std::vector<Sample> in;
  for (int i = 0; i < 5; ++i) {
    Sample s;
    s.t = kT0 + i;
    in.push_back(s);
  }
  expect_columns_same(in, columns_round_trip(in));
  EXPECT_TRUE(columns_round_trip({}).empty());
}

// A steady job of 64 processes over 600 samples (a raw block): the strings
// once, flat numbers nothing, only the CPU % noise per sample.
TEST(ProcessColumns, SixtyFourSteadyProcessesCostLittle) {
  std::vector<Sample> in;
  uint64_t seed = 1;
  for (int i = 0; i < 600; ++i) {
    Sample s = make_sample(kT0 + i, i, 8);
    s.processes.clear();
    for (uint32_t pid = 1000; pid < 1064; ++pid) {
      ProcessSample p;
      p.pid = pid;
      p.ppid = 999;
      p.user = "alice";
      p.name = "pt_data_worker";
      p.cmdline = "/usr/bin/python3 -m torch.distributed.run train.py --rank " +
                  std::to_string(pid % 8);
      p.state = "R";
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      p.cpu_pct = 90 + static_cast<double>((seed >> 33) % 100) / 10;
      p.threads = 4;
      p.rss_bytes = 2ull << 30;
      p.start_time = kT0 - 3600;
      s.processes.push_back(p);
    }
    in.push_back(s);
  }
  auto enc = encode_block(in, 9);
  // ~1 byte of CPU noise per process per sample, everything else ~free.
  const double per_process_sample =
      static_cast<double>(enc.numeric.size() + enc.rest.size()) / (600 * 64);
  EXPECT_LT(per_process_sample, 1.5);
  expect_columns_same(in, decode_block(enc.numeric, enc.rest));
}

TEST(ProcessColumns, NumericOnlyDecodeSkipsThem) {
  std::vector<Sample> in;
  for (int i = 0; i < 50; ++i) in.push_back(make_sample(kT0 + i, i, 2));
  auto enc = encode_block(in, 3);
  auto cols = decode_numeric(enc.numeric, 0, -1);
  EXPECT_FALSE(cols.has_processes);
  const std::vector<int> none;
  auto with = decode_numeric_fields(enc.numeric, none, none, true);
  ASSERT_TRUE(with.has_processes);
  ASSERT_EQ(with.processes.procs.size(), 2u);
  EXPECT_EQ(with.processes.procs[0].statics.cmdline,
            "python train.py --rank 0");
  EXPECT_EQ(with.processes.procs[0].at.size(), 50u);
  ASSERT_EQ(with.processes.gpus.size(), 2u);
  EXPECT_EQ(with.processes.gpus[1].entries[0].pid, 101u);
  EXPECT_EQ(with.processes.gpus[1].entries[0].used[7].i, 2007);
}

TEST(ProcessColumns, DamagedProcessSectionsAreRejected) {
  std::vector<Sample> in;
  for (int i = 0; i < 30; ++i) in.push_back(make_sample(kT0 + i, i, 2));
  // Every truncation of the decompressed stream is an error, not a crash:
  // re-encode a blob cut at each point of its process section.
  auto enc = encode_block(in, 3);
  size_t errors = 0;
  for (size_t cut = 1; cut < 64; ++cut) {
    std::string numeric = enc.numeric;
    numeric[numeric.size() / 2] ^= static_cast<char>(cut);
    try {
      decode_block(numeric, enc.rest);
    } catch (const CodecError&) {
      ++errors;
    }
  }
  EXPECT_GT(errors, 0u);
}

}  // namespace
}  // namespace gd::store
