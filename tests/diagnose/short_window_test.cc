// Short windows (the 13-16 s of a first live diagnose): rules that need more
// say so instead of passing for "all is well", and a leak that fills the GPU
// within minutes is reported without waiting for five of them.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "scenario_builder.h"
#include "text_contains.h"
#include "views/diagnose_report.h"

namespace gd::test {
namespace {

constexpr uint64_t kWindowMiB = 1ull << 20;

// `n` samples at 1 Hz of pid 4242 on a busy 80 GiB GPU 0 holding
// `mib(i)`; the GPU's used memory is the process's plus 512 MiB.
DiagnoseResult one_process(size_t n, const std::function<double(size_t)>& mib) {
  Jitter j;
  auto samples = make_samples(n, 1.0, [&](size_t i, Sample& s) {
    GpuSample g = busy_gpu(0, j);
    auto bytes =
        static_cast<uint64_t>(mib(i) * static_cast<double>(kWindowMiB));
    g.mem_used_bytes = bytes + 512 * kWindowMiB;
    g.processes = std::vector<GpuProcess>{GpuProcess{4242, bytes, "compute"}};
    s.gpus.push_back(g);
    ProcessSample p = process(4242, "python");
    p.ppid = 4000;
    s.processes.push_back(p);
  });
  return run_diagnose(make_header(1), samples);
}

TEST(FastLeak, FifteenSamplesOfThirtyGiBPerMinuteAreCriticalWithTimeToFull) {
  // 512 MiB a second from 20 GiB: after 14 s, 27 GiB of 80 are used and the
  // GPU is full in under two minutes.
  auto r = one_process(15, [](size_t i) { return 20480.0 + 512.0 * i; });
  auto f = with_id(r, "memory-leak");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, "critical");
  EXPECT_EQ(f[0].pids, std::vector<uint32_t>{4242});
  EXPECT_TRUE(contains(f[0].title, "30720.0 MiB/min")) << f[0].title;
  EXPECT_TRUE(contains(f[0].title, "full in about 1")) << f[0].title;
  EXPECT_TRUE(contains(f[0].evidence, "full in about")) << f[0].evidence;
  EXPECT_EQ(diagnose_exit_code(r), 2);
}

TEST(FastLeak, FullWithinFifteenMinutesIsAWarning) {
  // 5 GiB/min from 20 GiB: ~59 GiB free, full in about 12 min.
  auto r = one_process(15, [](size_t i) { return 20480.0 + 5120.0 / 60 * i; });
  auto f = with_id(r, "memory-leak");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, "warning");
  EXPECT_TRUE(contains(f[0].title, "full in about 12 min")) << f[0].title;
}

TEST(FastLeak, NineSamplesAreTooFewEvenForAFastLeak) {
  auto r = one_process(9, [](size_t i) { return 20480.0 + 512.0 * i; });
  EXPECT_TRUE(with_id(r, "memory-leak").empty());
  EXPECT_NE(not_judged(r, "memory-leak"), nullptr);
}

TEST(FastLeak, SlowLeakInAShortWindowIsNotJudgedAndSaysWhatItNeeds) {
  // 60 MiB/min: full in about 16 h; 15 s cannot tell it from warm-up.
  auto r = one_process(15, [](size_t i) { return 20480.0 + 1.0 * i; });
  EXPECT_TRUE(with_id(r, "memory-leak").empty());
  const NotJudged* n = not_judged(r, "memory-leak");
  ASSERT_NE(n, nullptr);
  EXPECT_TRUE(contains(n->reason, "needs 5 min of one process's GPU memory"))
      << n->reason;
  EXPECT_TRUE(contains(n->reason, "the window has 14 s")) << n->reason;
}

TEST(FastLeak, CachingAllocatorThatGrowsOnceThenStaysFlatDoesNotFire) {
  // Fills a 60 GiB pool in three big steps, then holds it: at the rate of
  // those steps the GPU would be full in seconds, but it stopped growing.
  auto r = one_process(15, [](size_t i) {
    return 2048.0 + 20480.0 * static_cast<double>(std::min<size_t>(i, 3));
  });
  EXPECT_TRUE(with_id(r, "memory-leak").empty());
  EXPECT_NE(not_judged(r, "memory-leak"), nullptr);  // a slow one may hide
}

TEST(FastLeak, CachingAllocatorThatGrowsSmoothlyOnceDoesNotFire) {
  // Warm-up: 2 GiB a second for 5 s, then flat for 10 s.
  auto r = one_process(15, [](size_t i) {
    return 2048.0 * static_cast<double>(1 + std::min<size_t>(i, 5));
  });
  EXPECT_TRUE(with_id(r, "memory-leak").empty());
}

TEST(FastLeak, LongWindowFlatProcessIsJudged) {
  auto r = one_process(301, [](size_t) { return 20480.0; });
  EXPECT_TRUE(with_id(r, "memory-leak").empty());
  EXPECT_EQ(not_judged(r, "memory-leak"), nullptr);
}

// The window of the tracker's report: 15 s where one process holds 10 GiB
// on an idle GPU 1 and others saturate the CPUs under a slow GPU 0 job.
DiagnoseResult tracker_window() {
  Jitter j;
  auto samples = make_samples(15, 1.0, [&](size_t, Sample& s) {
    GpuSample g0 = busy_gpu(0, j);
    g0.util_pct = 20;
    g0.mem_used_bytes = 20 * kGiB + 512 * kWindowMiB;
    g0.processes = std::vector<GpuProcess>{{7000, 20 * kGiB, "compute"}};
    GpuSample g1 = idle_gpu(1, j);
    g1.mem_used_bytes = 10 * kGiB + 512 * kWindowMiB;
    g1.processes = std::vector<GpuProcess>{{7001, 10 * kGiB, "compute"}};
    s.gpus = {g0, g1};
    s.host.cpu_util_pct = 100;
    s.processes.push_back(process(7000, "train"));
    s.processes.push_back(process(7001, "notebook"));
    for (uint32_t k = 0; k < 48; ++k)
      s.processes.push_back(process(9000 + k, "ffmpeg"));
  });
  return run_diagnose(make_header(2), samples);
}

// Two samples of a missing owner may be a process that just exited: the
// rule neither fires nor passes for "all is well".
TEST(ShortWindow, OrphanedMemoryInTwoSamplesIsNotJudged) {
  Jitter j;
  auto samples = make_samples(2, 1.0, [&](size_t, Sample& s) {
    GpuSample g = busy_gpu(0, j);
    g.mem_used_bytes = 6 * kGiB;
    g.processes =
        std::vector<GpuProcess>{GpuProcess{4242, 6 * kGiB, "compute"}};
    s.gpus.push_back(g);
    ProcessSample gone;
    gone.pid = 4242;
    gone.state = "missing";
    s.processes.push_back(gone);
  });
  auto r = run_diagnose(make_header(1), samples);
  EXPECT_TRUE(with_id(r, "orphaned-memory").empty());
  const NotJudged* n = not_judged(r, "orphaned-memory");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->reason,
            "needs 3 samples of GPU memory no live process accounts for; the "
            "window has 2");
}

TEST(ShortWindow, RulesThatNeedMoreAreListedWithWhatTheyNeed) {
  auto r = tracker_window();
  for (const char* id : {"memory-leak", "gpu-idle-allocated", "cpu-contention"})
    EXPECT_NE(not_judged(r, id), nullptr) << id;
  const NotJudged* cpu = not_judged(r, "cpu-contention");
  ASSERT_NE(cpu, nullptr);
  EXPECT_TRUE(contains(cpu->reason, "needs 30 samples")) << cpu->reason;
  EXPECT_TRUE(contains(cpu->reason, "the window has 15")) << cpu->reason;
  const NotJudged* idle = not_judged(r, "gpu-idle-allocated");
  ASSERT_NE(idle, nullptr);
  EXPECT_TRUE(contains(idle->reason, "needs 5 min")) << idle->reason;
}

TEST(ShortWindow, TextReportNeverSaysAllIsWellAndListsTheUnjudged) {
  auto r = tracker_window();
  std::string text = format_text_report(r, make_header(2));
  EXPECT_FALSE(contains(text, "All is well")) << text;
  EXPECT_TRUE(contains(text, "Not judged (")) << text;
  EXPECT_TRUE(contains(text,
                       "  memory-leak: a slow leak needs 5 min of one "
                       "process's GPU memory; the window has 14 s"))
      << text;
  EXPECT_TRUE(contains(text, "  cpu-contention: needs 30 samples")) << text;
}

TEST(ShortWindow, JsonListsNotJudgedWithIdAndReason) {
  auto r = tracker_window();
  auto doc = nlohmann::json::parse(format_json_report(r));
  ASSERT_TRUE(doc["not_judged"].is_array());
  std::vector<std::string> ids;
  for (const auto& n : doc["not_judged"]) {
    ASSERT_TRUE(n["reason"].is_string());
    EXPECT_FALSE(n["reason"].get<std::string>().empty());
    ids.push_back(n["id"].get<std::string>());
  }
  for (const char* id : {"memory-leak", "gpu-idle-allocated", "cpu-contention"})
    EXPECT_NE(std::find(ids.begin(), ids.end(), id), ids.end()) << id;
}

TEST(ShortWindow, LongQuietWindowJudgesEverythingAndSaysAllIsWell) {
  Jitter j;
  auto samples = make_samples(301, 1.0, [&](size_t, Sample& s) {
    GpuSample g = busy_gpu(0, j);
    // GPM pipe activity (without it tensor-cores-unused cannot judge).
    g.gpm.sm_active_pct = 85;
    g.gpm.tensor_active_pct = 50;
    g.gpm.fp32_active_pct = 10;
    g.mem_used_bytes = 20 * kGiB + 512 * kWindowMiB;
    g.processes = std::vector<GpuProcess>{{7000, 20 * kGiB, "compute"}};
    s.gpus = {g};
    ProcessSample p = process(7000, "train");
    // What a CUDA program maps: the driver's libcuda and its runtime.
    p.libs = {"libcuda.so.535.129.03", "libcudart.so.12.2.140"};
    s.processes.push_back(p);
  });
  auto r = run_diagnose(make_header(1), samples);
  ASSERT_TRUE(r.findings.empty())
      << r.findings[0].id << ": " << r.findings[0].evidence;
  EXPECT_TRUE(r.not_judged.empty())
      << r.not_judged[0].id << ": " << r.not_judged[0].reason;
  EXPECT_TRUE(contains(format_text_report(r, make_header(1)), "All is well"));
  auto doc = nlohmann::json::parse(format_json_report(r));
  EXPECT_TRUE(doc["not_judged"].is_array() && doc["not_judged"].empty());
}

// `n` samples at 1 Hz of GPU 0 as `gpu` makes it, nobody on it.
DiagnoseResult gpu_window(size_t n,
                          const std::function<void(GpuSample&)>& gpu) {
  Jitter j;
  auto samples = make_samples(n, 1.0, [&](size_t, Sample& s) {
    GpuSample g = busy_gpu(0, j);
    g.mem_used_bytes = 512 * kWindowMiB;
    gpu(g);
    s.gpus = {g};
  });
  return run_diagnose(make_header(1), samples);
}

TEST(ShortWindow, HighMemoryForLessThanAMinuteIsNotJudged) {
  auto r = gpu_window(15, [](GpuSample& g) { g.mem_used_bytes = 78 * kGiB; });
  EXPECT_TRUE(with_id(r, "memory-pressure").empty());
  const NotJudged* n = not_judged(r, "memory-pressure");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->reason,
            "needs 60 s of high GPU memory use; the window has 14 s");
}

TEST(ShortWindow, ThrottlingInTwoSamplesIsNotJudged) {
  auto r = gpu_window(2, [](GpuSample& g) {
    g.clock_event_reasons = std::vector<std::string>{"sw_thermal_slowdown"};
    g.sm_clock_mhz = 1005;
    g.temp_c = 88;
  });
  EXPECT_TRUE(with_id(r, "thermal-throttling").empty());
  const NotJudged* n = not_judged(r, "thermal-throttling");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->reason,
            "needs 3 samples of a busy GPU held down by a thermal reason; the "
            "window has 2");
}

TEST(ShortWindow, AGpuHotterThanItsPeersForTenSamplesIsNotJudged) {
  Jitter j;
  auto samples = make_samples(10, 1.0, [&](size_t, Sample& s) {
    for (int i = 0; i < 4; ++i) {
      GpuSample g = busy_gpu(i, j);
      if (i == 2) *g.temp_c += 16;
      s.gpus.push_back(g);
    }
  });
  auto r = run_diagnose(make_header(4), samples);
  EXPECT_TRUE(with_id(r, "thermal-outlier").empty());
  const NotJudged* n = not_judged(r, "thermal-outlier");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->reason,
            "needs 20 samples of a GPU out of line with its peers; the window "
            "has 10");
}

TEST(ShortWindow, WhatAShortWindowSettlesCountsAsJudged) {
  // Busy, memory low, not throttled: nothing those rules look for was
  // there, and more samples would not make it appear in these.
  auto r = gpu_window(15, [](GpuSample&) {});
  for (const char* id : {"memory-pressure", "thermal-throttling",
                         "gpu-idle-allocated", "memory-leak"})
    EXPECT_EQ(not_judged(r, id), nullptr) << id;
}

TEST(WindowParts, ReportSaysWhichPartCameFromServeAndWhichWasLive) {
  DiagnoseResult r;
  r.rules_checked = {"gpu-lost"};
  r.window = {kT0, kT0 + 630, 631, {}};
  r.window.parts = {{"serve", "http://127.0.0.1:9856", kT0, kT0 + 599, 600},
                    {"live", "", kT0 + 600, kT0 + 630, 31}};
  std::string text = format_text_report(r, make_header(1));
  EXPECT_TRUE(contains(text,
                       "from serve's history (http://127.0.0.1:9856): 600 "
                       "samples, 2024-11-22 08:00:00-08:09:59 UTC (10 min)"))
      << text;
  EXPECT_TRUE(contains(text, "sampled live: 31 samples")) << text;
  auto doc = nlohmann::json::parse(format_json_report(r));
  auto parts = doc["window"]["parts"];
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0]["source"], "serve");
  EXPECT_EQ(parts[0]["url"], "http://127.0.0.1:9856");
  EXPECT_EQ(parts[0]["samples"], 600);
  EXPECT_EQ(parts[1]["source"], "live");
  EXPECT_EQ(parts[1]["samples"], 31);
}

}  // namespace
}  // namespace gd::test
