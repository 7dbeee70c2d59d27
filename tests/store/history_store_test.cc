// HistoryStore behaviour as serve and export use it: round trip, queries,
// downsampling, retention, concurrent use.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <thread>

#include "store/downsample.h"
#include "store_test_util.h"
#include "trace/model_compare.h"
#include "tracegen/tracegen.h"

namespace gd {
namespace {

using testing::export_all;
using testing::kT0;
using testing::make_sample;
using testing::open_store;
using testing::StoreDir;

TEST(HistoryStore, ExportGivesBackTheRecordedTraceExactly) {
  StoreDir dir;
  tracegen::Options go;
  go.gpus = 4;
  go.duration_s = 1500;  // crosses two 600 s block windows
  TraceHeader header;
  auto samples = tracegen::generate_all("xid-events", go, &header);
  ASSERT_GT(samples.size(), 1000u);
  {
    auto store = open_store(dir.path("h.db"), 7);
    store->set_header(header);
    // Half, close, reopen, the rest: a restarted daemon continues the DB.
    for (size_t i = 0; i < samples.size() / 2; ++i) store->append(samples[i]);
  }
  auto store = open_store(dir.path("h.db"), 7);
  for (size_t i = samples.size() / 2; i < samples.size(); ++i)
    store->append(samples[i]);

  TraceHeader back_header;
  auto back = export_all(*store, dir.path("out.jsonl"), 0, 1e18, &back_header);
  testing::expect_same(header, back_header);
  ASSERT_EQ(back.size(), samples.size());
  for (size_t i = 0; i < samples.size(); ++i) {
    SCOPED_TRACE("sample " + std::to_string(i));
    testing::expect_same(samples[i], back[i]);
  }
}

TEST(HistoryStore, ExportKeepsOddValuesAndStates) {
  StoreDir dir;
  std::vector<Sample> in;
  for (int i = 0; i < 25; ++i) in.push_back(make_sample(kT0 + i * 0.5, i, 3));
  in[3].gpus[1] = GpuSample{};  // lost GPU: index + flag only
  in[3].gpus[1].index = 1;
  in[3].gpus[1].lost = true;
  in[4].gpus[2] = GpuSample{};
  in[4].gpus[2].index = 2;
  in[4].gpus[2].stale = true;
  in[5].gpus[0].util_pct = 0.1 + 0.2;  // no short decimal form
  in[5].gpus[0].power_w = 1e-300;
  in[6].gpus[0].power_w = -12345.678901234;
  in[6].gpus[0].mem_used_bytes = UINT64_MAX;
  in[7].gpus[0].fan_pct = 33.3;
  in[7].gpus[0].clock_event_reasons =
      std::vector<std::string>{"sw_power_cap", "hw_slowdown"};
  in[8].gpus[0].clock_event_reasons.reset();
  in[8].gpus[0].processes.reset();
  in[9].host = HostSample{};
  in[10].events.push_back({"xid", 0, 79, std::nullopt,
                           "NVRM: Xid (PCI:0000:07:00): 79, pid=1", "", ""});
  in[10].events.push_back({"oom_kill", std::nullopt, std::nullopt, 4242u,
                           "Killed process 4242", "", ""});
  in[11].processes.clear();
  in[12].t = in[11].t;  // equal times are allowed in a trace
  auto store = open_store(dir.path("h.db"), 4);
  for (const auto& s : in) store->append(s);
  auto back = export_all(*store, dir.path("out.jsonl"));
  ASSERT_EQ(back.size(), in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    SCOPED_TRACE("sample " + std::to_string(i));
    testing::expect_same(in[i], back[i]);
  }
}

TEST(HistoryStore, SampleGoingBackInTimeIsDropped) {
  StoreDir dir;
  auto store = open_store(dir.path("h.db"));
  store->append(make_sample(kT0 + 10, 0));
  store->append(make_sample(kT0 + 5, 1));
  store->append(make_sample(kT0 + 11, 2));
  auto back = export_all(*store, dir.path("out.jsonl"));
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[1].t, kT0 + 11);
}

TEST(HistoryStore, ExportHonoursSinceAndUntil) {
  StoreDir dir;
  auto store = open_store(dir.path("h.db"));
  for (int i = 0; i < 1300; ++i) store->append(make_sample(kT0 + i, i));
  auto back = export_all(*store, dir.path("out.jsonl"), kT0 + 100, kT0 + 700);
  ASSERT_EQ(back.size(), 601u);
  EXPECT_EQ(back.front().t, kT0 + 100);
  EXPECT_EQ(back.back().t, kT0 + 700);
}

TEST(HistoryStore, QueryRawPointsPerGpu) {
  StoreDir dir;
  auto store = open_store(dir.path("h.db"));
  // 1250 samples: two sealed blocks, flushed pending rows, unflushed tail.
  for (int i = 0; i < 1255; ++i) store->append(make_sample(kT0 + i, i));
  auto series = store->query("gpu.util_pct", std::nullopt, std::nullopt, kT0,
                             kT0 + 2000, 0);
  ASSERT_EQ(series.size(), 2u);
  for (int g = 0; g < 2; ++g) {
    EXPECT_EQ(series[g].gpu, g);
    EXPECT_EQ(series[g].pid, std::nullopt);
    ASSERT_EQ(series[g].points.size(), 1255u);
    for (int i = 0; i < 1255; ++i) {
      EXPECT_EQ(series[g].points[i].t, kT0 + i);
      EXPECT_EQ(series[g].points[i].v, (i % 10) * (g + 1));
    }
  }
  auto one = store->query("gpu.mem_used_bytes", 1, std::nullopt, kT0 + 10,
                          kT0 + 12, 0);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].gpu, 1);
  ASSERT_EQ(one[0].points.size(), 3u);
  EXPECT_EQ(one[0].points[2].v, 1000000000.0 + 12000);

  auto host = store->query("host.cpu_util_pct", std::nullopt, std::nullopt, kT0,
                           kT0 + 3, 0);
  ASSERT_EQ(host.size(), 1u);
  EXPECT_EQ(host[0].gpu, std::nullopt);
  ASSERT_EQ(host[0].points.size(), 4u);
  EXPECT_EQ(host[0].points[3].v, 13);
}

TEST(HistoryStore, QueryAveragesPerStepBucket) {
  StoreDir dir;
  auto store = open_store(dir.path("h.db"));
  for (int i = 0; i < 700; ++i) store->append(make_sample(kT0 + i, i));
  auto series =
      store->query("gpu.util_pct", 1, std::nullopt, kT0, kT0 + 699, 10);
  ASSERT_EQ(series.size(), 1u);
  ASSERT_EQ(series[0].points.size(), 70u);
  for (int b = 0; b < 70; ++b) {
    EXPECT_EQ(series[0].points[b].t, kT0 + 10 * b);
    EXPECT_DOUBLE_EQ(series[0].points[b].v, 9.0);  // mean of 0,2,..,18
  }
  // A bucket cut by `since` averages only what is inside.
  auto cut = store->query("host.cpu_util_pct", std::nullopt, std::nullopt,
                          kT0 + 2, kT0 + 3, 60);
  ASSERT_EQ(cut.size(), 1u);
  ASSERT_EQ(cut[0].points.size(), 1u);
  EXPECT_EQ(cut[0].points[0].t, kT0);
  EXPECT_DOUBLE_EQ(cut[0].points[0].v, 12.5);  // 12, 13
}

TEST(HistoryStore, QueryProcessMetricsPerPid) {
  StoreDir dir;
  auto store = open_store(dir.path("h.db"));
  for (int i = 0; i < 650; ++i) store->append(make_sample(kT0 + i, i, 3));
  auto used = store->query("process.used_bytes", std::nullopt, std::nullopt,
                           kT0, kT0 + 9, 0);
  ASSERT_EQ(used.size(), 3u);
  for (int g = 0; g < 3; ++g) {
    EXPECT_EQ(used[g].gpu, g);
    EXPECT_EQ(used[g].pid, 100 + g);
    ASSERT_EQ(used[g].points.size(), 10u);
    EXPECT_EQ(used[g].points[9].v, 2009);
  }
  auto cpu =
      store->query("process.cpu_pct", 2, std::nullopt, kT0 + 600, kT0 + 605, 0);
  ASSERT_EQ(cpu.size(), 1u);
  EXPECT_EQ(cpu[0].gpu, 2);
  EXPECT_EQ(cpu[0].pid, 102);
  ASSERT_EQ(cpu[0].points.size(), 6u);
  EXPECT_EQ(cpu[0].points[0].v, 50.0);  // 600 % 3 == 0
  auto by_pid =
      store->query("process.cpu_pct", std::nullopt, 101, kT0, kT0 + 2, 0);
  ASSERT_EQ(by_pid.size(), 1u);
  EXPECT_EQ(by_pid[0].pid, 101);
  EXPECT_EQ(by_pid[0].gpu, 1);
}

TEST(HistoryStore, UnknownMetricIsAnError) {
  StoreDir dir;
  auto store = open_store(dir.path("h.db"));
  for (const char* bad :
       {"gpu.nope", "util_pct", "host.", "process.rss", "gpu.processes"}) {
    try {
      store->query(bad, std::nullopt, std::nullopt, 0, 1e18, 0);
      ADD_FAILURE() << bad << " accepted";
    } catch (const StoreError& e) {
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(
      store->query("gpu.util_pct", std::nullopt, std::nullopt, 0, 1, -1),
      StoreError);
}

TEST(HistoryStore, MetricsListsEveryQueryableName) {
  StoreDir dir;
  auto store = open_store(dir.path("h.db"));
  auto names = store->metrics();
  for (const char* want :
       {"gpu.util_pct", "gpu.mem_used_bytes", "gpu.temp_c", "gpu.power_w",
        "host.cpu_util_pct", "host.mem_available_bytes", "process.used_bytes",
        "process.cpu_pct"})
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  for (const auto& n : names)
    EXPECT_NO_THROW(store->query(n, std::nullopt, std::nullopt, 0, 1, 0)) << n;
}

TEST(HistoryStore, OldDataIsDownsampledToMinuteAverages) {
  StoreDir dir;
  auto store = open_store(dir.path("h.db"), 10, 30 * 86400.0);
  const int n = 1800;  // 30 minutes at 1 s: three raw blocks
  std::vector<Sample> in;
  for (int i = 0; i < n; ++i) {
    in.push_back(make_sample(kT0 + i, i));
    if (i == 70)
      in.back().events.push_back(
          {"xid", 0, 13, std::nullopt, "xid 13", "", ""});
    if (i == 75) in.back().gpus[0].retired_pages_pending = true;
  }
  for (const auto& s : in) store->append(s);
  // 30 minutes of newer data that must stay raw.
  const double fresh0 = kT0 + store::kRawKeepS;
  for (int i = 0; i < 120; ++i) store->append(make_sample(fresh0 + i, i));
  store->flush();
  store->maintain(fresh0 + 1800);

  auto back = export_all(*store, dir.path("out.jsonl"));
  ASSERT_EQ(back.size(), 30u + 120u);
  for (int m = 0; m < 30; ++m) {
    SCOPED_TRACE("minute " + std::to_string(m));
    const Sample& s = back[m];
    EXPECT_EQ(s.t, kT0 + 60 * m + 59);  // the minute's last sample
    ASSERT_EQ(s.gpus.size(), 2u);
    double util = 0, power = 0, mem = 0;
    for (int i = 60 * m; i < 60 * m + 60; ++i) {
      util += *in[i].gpus[1].util_pct;
      power += *in[i].gpus[0].power_w;
      mem += static_cast<double>(*in[i].gpus[0].mem_used_bytes);
    }
    EXPECT_DOUBLE_EQ(*s.gpus[1].util_pct, util / 60);
    EXPECT_DOUBLE_EQ(*s.gpus[0].power_w, power / 60);
    EXPECT_EQ(*s.gpus[0].mem_used_bytes,
              static_cast<uint64_t>(std::llround(mem / 60)));
    EXPECT_EQ(s.gpus[0].temp_c, 40);
    EXPECT_EQ(*s.gpus[0].retired_pages_pending, m == 1);
    EXPECT_EQ(s.events.size(), m == 1 ? 1u : 0u);
    EXPECT_DOUBLE_EQ(*s.host.cpu_util_pct, 11.5);  // 10..13 evenly
    ASSERT_EQ(s.processes.size(), 2u);
    EXPECT_NEAR(*s.processes[0].cpu_pct, 51.0,
                0.02);  // 50..52, rounded to 3 decimals
  }
  for (int i = 0; i < 120; ++i)
    testing::expect_same(make_sample(fresh0 + i, i), back[30 + i]);

  // Queries read both tiers.
  auto q = store->query("gpu.util_pct", 0, std::nullopt, 0, 1e18, 0);
  ASSERT_EQ(q.size(), 1u);
  EXPECT_EQ(q[0].points.size(), 150u);
  EXPECT_DOUBLE_EQ(q[0].points[0].v, 4.5);

  // A second maintain changes nothing more.
  store->maintain(fresh0 + 1800);
  EXPECT_EQ(export_all(*store, dir.path("out2.jsonl")).size(), 150u);
}

TEST(HistoryStore, DownsamplingAcrossCallsFillsOneHourBlock) {
  StoreDir dir;
  auto store = open_store(dir.path("h.db"), 10, 30 * 86400.0);
  for (int i = 0; i < 3600; ++i) store->append(make_sample(kT0 + i, i));
  store->flush();
  // Ten minutes become old at a time, as with a running daemon.
  for (int k = 1; k <= 7; ++k)
    store->maintain(kT0 + store::kRawKeepS + 600 * k);
  auto back = export_all(*store, dir.path("out.jsonl"));
  ASSERT_EQ(back.size(), 60u);
  for (int m = 0; m < 60; ++m) EXPECT_EQ(back[m].t, kT0 + 60 * m + 59);
}

TEST(HistoryStore, RetentionDeletesOldData) {
  StoreDir dir;
  const double retention = 3600;
  auto store = open_store(dir.path("h.db"), 10, retention);
  const int n = 3 * 3600;
  for (int i = 0; i < n; ++i) store->append(make_sample(kT0 + i, i));
  store->flush();
  const double now = kT0 + n;
  store->maintain(now);
  auto back = export_all(*store, dir.path("out.jsonl"));
  ASSERT_FALSE(back.empty());
  // Whole blocks are deleted: nothing older than retention plus one block.
  EXPECT_GE(back.front().t, now - retention - store::kRawBlockSpanS);
  EXPECT_LE(back.front().t, now - retention);
  EXPECT_EQ(back.back().t, kT0 + n - 1);
  // A later maintain deletes more as time goes on.
  store->maintain(now + 1800);
  auto later = export_all(*store, dir.path("out2.jsonl"));
  EXPECT_GE(later.front().t, now + 1800 - retention - store::kRawBlockSpanS);
  EXPECT_LT(later.size(), back.size());
}

TEST(HistoryStore, AppendAndQueryFromTwoThreads) {
  StoreDir dir;
  auto store = open_store(dir.path("h.db"), 10);
  const int n = 2500;
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (int i = 0; i < n; ++i) store->append(make_sample(kT0 + i, i));
    store->flush();
    done = true;
  });
  size_t last_count = 0;
  int rounds = 0;
  while (!done || rounds < 3) {
    auto q = store->query("gpu.util_pct", 0, std::nullopt, 0, 1e18, 0);
    size_t count = q.empty() ? 0 : q[0].points.size();
    // No sample is lost or seen twice while blocks are being sealed.
    EXPECT_GE(count, last_count);
    if (!q.empty()) {
      for (size_t i = 0; i < count; ++i) ASSERT_EQ(q[0].points[i].t, kT0 + i);
    }
    last_count = count;
    auto p =
        store->query("process.used_bytes", 1, std::nullopt, kT0, kT0 + 50, 5);
    (void)p;
    ++rounds;
  }
  writer.join();
  auto q = store->query("gpu.util_pct", 0, std::nullopt, 0, 1e18, 0);
  ASSERT_EQ(q.size(), 1u);
  EXPECT_EQ(q[0].points.size(), static_cast<size_t>(n));
  EXPECT_EQ(export_all(*store, dir.path("out.jsonl")).size(),
            static_cast<size_t>(n));
}

TEST(HistoryStore, ReadOnlyStoreSeesWhatTheWriterFlushed) {
  StoreDir dir;
  auto writer = open_store(dir.path("h.db"), 10);
  for (int i = 0; i < 1234; ++i) writer->append(make_sample(kT0 + i, i));
  StoreOptions o;
  o.path = dir.path("h.db");
  o.read_only = true;
  auto reader = HistoryStore::open(o);
  // 1234 appended: 1230 flushed (batches of 10), 4 only in the writer.
  EXPECT_EQ(export_all(*reader, dir.path("out.jsonl")).size(), 1230u);
  EXPECT_THROW(reader->append(make_sample(kT0 + 5000, 0)), StoreError);
}

}  // namespace
}  // namespace gd
