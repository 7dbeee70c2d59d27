// A node's window as a trace: values at grid times, fields no series gives
// left absent, one source per field, MIG and other nodes' series left out,
// Xid codes as events, the header from labels and facts.
#include "promsource/node_window.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace gd::promsource {
namespace {

using http::prom::Point;
using http::prom::Series;

const Entry& window_entry(const std::string& query) {
  for (const Entry& e : entries())
    if (e.query == query) return e;
  throw std::runtime_error("no entry " + query);
}

Series gpu_series(const std::string& gpu, std::vector<Point> points,
                  const std::string& hostname = "n1") {
  Series s;
  s.labels = {{"Hostname", hostname},
              {"UUID", "GPU-" + gpu},
              {"gpu", gpu},
              {"instance", "10.0.0.1:9400"},
              {"modelName", "NVIDIA H100 80GB HBM3"}};
  s.points = std::move(points);
  return s;
}

std::vector<Sample> samples(const NodeWindow& w) {
  std::vector<Sample> out;
  w.each_sample([&](const Sample& s) { out.push_back(s); });
  return out;
}

TEST(NodeWindow, ValuesLandOnTheGridAndAbsentFieldsStayAbsent) {
  NodeWindow w("n1", 1000, 1060, 15);  // 1000, 1015, ..., 1060
  EXPECT_EQ(w.steps(), 5u);
  w.add(window_entry("DCGM_FI_DEV_GPU_TEMP"),
        {gpu_series("0", {{1000, 71}, {1015, 72}, {1017, 99}, {1030, NAN}})});
  w.add(window_entry("DCGM_FI_DEV_GPU_UTIL"), {gpu_series("1", {{1060, 100}})});
  auto out = samples(w);
  ASSERT_EQ(out.size(), 3u);  // 1000, 1015, 1060: 1017 is off the grid
  EXPECT_EQ(out[0].t, 1000);
  ASSERT_EQ(out[0].gpus.size(), 1u);
  EXPECT_EQ(out[0].gpus[0].index, 0);
  EXPECT_EQ(out[0].gpus[0].temp_c, 71);
  EXPECT_FALSE(out[0].gpus[0].util_pct);
  EXPECT_FALSE(out[0].gpus[0].power_w);
  EXPECT_FALSE(out[0].gpus[0].clock_event_reasons);
  EXPECT_FALSE(out[0].host.cpu_util_pct);
  EXPECT_EQ(out[1].gpus[0].temp_c, 72);
  EXPECT_EQ(out[2].t, 1060);
  EXPECT_EQ(out[2].gpus[0].index, 1);
  EXPECT_EQ(out[2].gpus[0].util_pct, 100);

  TraceHeader h = w.header();
  EXPECT_EQ(h.host.hostname, "n1");
  ASSERT_EQ(h.gpus.size(), 2u);
  EXPECT_EQ(h.gpus[0].uuid, "GPU-0");
  EXPECT_EQ(h.gpus[1].name, "NVIDIA H100 80GB HBM3");
  EXPECT_FALSE(h.gpus[0].memory_total_bytes);
  EXPECT_FALSE(h.host.mem_total_bytes);
}

TEST(NodeWindow, OneSourcePerFieldTheFirstWins) {
  NodeWindow w("n1", 0, 15, 15);
  w.add(window_entry("gpudoctor_gpu_memory_used_bytes"),
        {gpu_series("0", {{0, 1000}})});
  w.add(window_entry("DCGM_FI_DEV_FB_USED"),
        {gpu_series("0", {{0, 1}, {15, 2}})});
  // Two exporters for one GPU: the first series is kept.
  w.add(window_entry("DCGM_FI_DEV_GPU_TEMP"),
        {gpu_series("0", {{0, 50}}), gpu_series("0", {{0, 90}})});
  auto out = samples(w);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].gpus[0].mem_used_bytes, 1000u);
  EXPECT_EQ(out[0].gpus[0].temp_c, 50);
}

TEST(NodeWindow, MigAndOtherNodesSeriesAreLeftOut) {
  NodeWindow w("n1", 0, 0, 15);
  Series mig = gpu_series("0", {{0, 10}});
  mig.labels.emplace_back("GPU_I_ID", "1");
  Series other = gpu_series("1", {{0, 10}}, "n2");
  Series bad = gpu_series("x", {{0, 10}});
  w.add(window_entry("DCGM_FI_DEV_GPU_UTIL"), {mig, other, bad});
  EXPECT_TRUE(samples(w).empty());
  EXPECT_TRUE(w.header().gpus.empty());
}

TEST(NodeWindow, XidChangesAreEvents) {
  NodeWindow w("n1", 0, 60, 15);
  w.add(window_entry("DCGM_FI_DEV_XID_ERRORS"),
        {gpu_series("3", {{0, 13}, {15, 13}, {30, 79}, {45, 0}, {60, 48}})});
  std::vector<Event> events;
  for (const Sample& s : samples(w))
    for (const Event& e : s.events) events.push_back(e);
  // 13 was there before the window: when it happened is unknown.
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].kind, "xid");
  EXPECT_EQ(events[0].gpu, 3);
  EXPECT_EQ(events[0].code, 79);
  EXPECT_EQ(events[1].code, 48);
}

TEST(NodeWindow, HeaderFactsAndTheTotalFromUsedAndFree) {
  NodeWindow w("n1", 0, 15, 15);
  w.add(window_entry("DCGM_FI_DEV_FB_USED"), {gpu_series("0", {{0, 100}})});
  w.add(window_entry("DCGM_FI_DEV_FB_FREE"), {gpu_series("0", {{0, 900}})});
  w.add(window_entry("gpudoctor_gpu_sm_clock_max_mhz"),
        {gpu_series("0", {{0, 1900}, {15, 1980}})});
  Series host;
  host.points = {{0, 64e9}, {15, 64e9}};
  w.add(window_entry("max(node_memory_MemTotal_bytes{$I})"), {host});
  TraceHeader h = w.header();
  ASSERT_EQ(h.gpus.size(), 1u);
  EXPECT_EQ(h.gpus[0].memory_total_bytes, 1000u * 1024 * 1024);
  EXPECT_EQ(h.gpus[0].sm_clock_max_mhz, 1980);
  EXPECT_EQ(h.host.mem_total_bytes, 64000000000u);
}

TEST(NodeWindow, HostSeriesAreTheNodesSamples) {
  NodeWindow w("n1", 0, 30, 15);
  Series s;
  s.points = {{15, 3.5}};
  w.add(window_entry("max(node_load1{$I})"), {s});
  auto out = samples(w);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].t, 15);
  EXPECT_TRUE(out[0].gpus.empty());
  EXPECT_EQ(out[0].host.load1, 3.5);
}

Series mode(const std::string& name, std::vector<http::prom::Point> points) {
  Series s;
  s.labels = {{"mode", name}};
  s.points = std::move(points);
  return s;
}

TEST(NodeWindow, CpuSharesFromTheTimeOfEachMode) {
  // CPU seconds a second by mode at 0 and 15 (8 CPUs): busy is user, nice,
  // system, irq and softirq of the sum of all modes.
  NodeWindow w("n1", 0, 30, 15);
  w.add(window_entry("sum by (mode) (rate(node_cpu_seconds_total{$I}$W))"),
        {mode("user", {{0, 3}, {15, 6}}), mode("system", {{0, 1}, {15, 1}}),
         mode("idle", {{0, 3.5}, {15, 0.5}}), mode("iowait", {{0, 0.5}}),
         mode("steal", {{15, 0.5}})});
  // serve's own series come after and give only what node_exporter did not.
  Series serve_steal;
  serve_steal.points = {{0, 99}, {30, 99}};
  w.add(window_entry("max($S(gpudoctor_host_cpu_steal_percent))"),
        {serve_steal});
  auto out = samples(w);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].host.cpu_util_pct, 50);  // 4 of 8
  EXPECT_EQ(out[0].host.cpu_iowait_pct, 6.25);
  EXPECT_FALSE(out[0].host.cpu_steal_pct);  // no steal series at 0
  EXPECT_EQ(out[1].host.cpu_util_pct, 87.5);
  EXPECT_FALSE(out[1].host.cpu_iowait_pct);
  EXPECT_EQ(out[1].host.cpu_steal_pct, 6.25);
}

TEST(NodeWindow, TooLongAWindowIsRefused) {
  EXPECT_THROW(NodeWindow("n1", 0, 15.0 * kMaxSteps, 15),
               std::invalid_argument);
  EXPECT_NO_THROW(NodeWindow("n1", 0, 15.0 * (kMaxSteps - 1), 15));
  EXPECT_THROW(NodeWindow("n1", 10, 0, 15), std::invalid_argument);
}

Series process_series(std::vector<std::pair<std::string, std::string>> labels,
                      std::vector<Point> points) {
  Series s;
  s.labels = {{"Hostname", "n1"}, {"instance", "10.0.0.1:9856"}};
  for (auto& l : labels) s.labels.push_back(std::move(l));
  s.points = std::move(points);
  return s;
}

TEST(NodeWindow, ServesProcessSeriesBecomeListsAndTheJobsTree) {
  NodeWindow w("n1", 0, 30, 15);  // 0, 15, 30
  w.add(window_entry("DCGM_FI_DEV_GPU_UTIL"),
        {gpu_series("0", {{0, 20}, {15, 90}, {30, 95}}),
         gpu_series("1", {{0, 0}, {15, 0}, {30, 0}})});
  // GPU 0's list is read at 0 and 15 (one process), GPU 1's at 15 (none);
  // at 30 neither list was read.
  w.add(window_entry("gpudoctor_gpu_processes"),
        {process_series({{"gpu", "0"}}, {{0, 1}, {15, 1}}),
         process_series({{"gpu", "1"}}, {{15, 0}})});
  w.add(window_entry("gpudoctor_process_gpu_memory_bytes"),
        {process_series({{"gpu", "0"}, {"pid", "4242"}},
                        {{0, 1e9}, {15, 2e9}, {30, 3e9}})});
  w.add(window_entry("gpudoctor_process_sm_utilization_percent"),
        {process_series({{"gpu", "0"}, {"pid", "4242"}}, {{15, 80}})});
  w.add(window_entry("gpudoctor_process_tree_cpu_percent"),
        {process_series({{"pid", "4242"},
                         {"ppid", "1"},
                         {"comm", "python"},
                         {"user", "alice"}},
                        {{0, 100}, {15, 99}}),
         process_series({{"pid", "4300"},
                         {"ppid", "4242"},
                         {"comm", "pt_data_worker"},
                         {"user", "alice"}},
                        {{0, 98}}),
         // Not a pid: left out.
         process_series({{"pid", "x"}, {"ppid", "1"}}, {{0, 5}}),
         // Another node's: left out.
         [] {
           auto s = process_series({{"pid", "7"}}, {{0, 5}});
           s.labels[0].second = "n2";
           return s;
         }()});
  auto out = samples(w);
  ASSERT_EQ(out.size(), 3u);
  ASSERT_TRUE(out[0].gpus[0].processes);
  ASSERT_EQ(out[0].gpus[0].processes->size(), 1u);
  const GpuProcess& gp = out[0].gpus[0].processes->front();
  EXPECT_EQ(gp.pid, 4242u);
  EXPECT_EQ(gp.used_bytes, 1000000000u);
  EXPECT_FALSE(gp.sm_util_pct);
  EXPECT_FALSE(out[0].gpus[1].processes);  // not read at 0
  EXPECT_EQ(out[1].gpus[0].processes->front().sm_util_pct, 80);
  ASSERT_TRUE(out[1].gpus[1].processes);  // read, and empty
  EXPECT_TRUE(out[1].gpus[1].processes->empty());
  // No list at 30: the process's memory there has nothing to go to.
  EXPECT_FALSE(out[2].gpus[0].processes);

  ASSERT_EQ(out[0].processes.size(), 2u);
  EXPECT_EQ(out[0].processes[0].pid, 4242u);
  EXPECT_EQ(out[0].processes[0].ppid, 1u);
  EXPECT_EQ(out[0].processes[0].name, "python");
  EXPECT_EQ(out[0].processes[0].user, "alice");
  EXPECT_EQ(out[0].processes[0].cpu_pct, 100);
  EXPECT_EQ(out[0].processes[1].ppid, 4242u);
  EXPECT_EQ(out[0].processes[1].cpu_pct, 98);
  ASSERT_EQ(out[1].processes.size(), 1u);  // the worker had no value at 15
  EXPECT_TRUE(out[2].processes.empty());
}

// A list is known only when every process serve counted has come (one
// whose memory NVML did not give has no series), and a dead holder is a
// process entry with the state serve saw.
TEST(NodeWindow, IncompleteListsAreUnknownAndDeadHoldersKeepTheirState) {
  NodeWindow w("n1", 0, 15, 15);
  w.add(window_entry("DCGM_FI_DEV_GPU_UTIL"),
        {gpu_series("0", {{0, 0}, {15, 0}}), gpu_series("1", {{0, 0}})});
  w.add(window_entry("gpudoctor_gpu_processes"),
        {process_series({{"gpu", "0"}}, {{0, 2}, {15, 1}}),
         process_series({{"gpu", "1"}}, {{0, 1}})});
  w.add(window_entry("gpudoctor_process_dead"),
        {process_series({{"gpu", "1"}, {"pid", "77"}, {"state", "missing"}},
                        {{0, 1}})});
  w.add(window_entry("gpudoctor_process_gpu_memory_bytes"),
        {process_series({{"gpu", "0"}, {"pid", "10"}}, {{0, 5e9}, {15, 5e9}}),
         process_series({{"gpu", "1"}, {"pid", "77"}}, {{0, 16e9}})});
  auto out = samples(w);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_FALSE(out[0].gpus[0].processes);  // 2 listed, 1 came: unknown
  ASSERT_TRUE(out[1].gpus[0].processes);
  EXPECT_EQ(out[1].gpus[0].processes->size(), 1u);
  ASSERT_TRUE(out[0].gpus[1].processes);
  EXPECT_EQ(out[0].gpus[1].processes->front().pid, 77u);
  ASSERT_EQ(out[0].processes.size(), 1u);
  EXPECT_EQ(out[0].processes[0].pid, 77u);
  EXPECT_EQ(out[0].processes[0].state, "missing");
  EXPECT_FALSE(out[0].processes[0].cpu_pct);
}

TEST(NodeWindow, DcgmMaxLinkFieldsAreTheHeadersPcieMaxima) {
  NodeWindow w("n1", 0, 15, 15);
  w.add(window_entry("DCGM_FI_DEV_PCIE_LINK_GEN"), {gpu_series("0", {{0, 3}})});
  w.add(window_entry("DCGM_FI_DEV_PCIE_MAX_LINK_GEN"),
        {gpu_series("0", {{0, 5}})});
  w.add(window_entry("DCGM_FI_DEV_PCIE_MAX_LINK_WIDTH"),
        {gpu_series("0", {{0, 16}})});
  TraceHeader h = w.header();
  ASSERT_EQ(h.gpus.size(), 1u);
  EXPECT_EQ(h.gpus[0].pcie_max_gen, 5);
  EXPECT_EQ(h.gpus[0].pcie_max_width, 16);
}

// A GPU index a node cannot have refuses the node, whatever the series;
// 64 GPUs are read, and a GPU keeps only the steps a series gave.
TEST(NodeWindow, GpusPastWhatANodeHasAreRefused) {
  NodeWindow w("n1", 0, 86400, 15);  // a day: 5,761 steps
  std::vector<Series> many;
  for (int g = 0; g < kMaxGpusPerNode; ++g)
    many.push_back(gpu_series(std::to_string(g), {{15, 50}}));
  w.add(window_entry("DCGM_FI_DEV_GPU_UTIL"), many);
  EXPECT_EQ(w.header().gpus.size(), 64u);
  EXPECT_EQ(samples(w).size(), 1u);
  for (const char* gpu : {"64", "1023", "99999999999999"}) {
    NodeWindow v("n1", 0, 15, 15);
    try {
      v.add(window_entry("DCGM_FI_DEV_GPU_TEMP"), {gpu_series(gpu, {{0, 50}})});
      ADD_FAILURE() << gpu << " was taken";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("a node has at most 64 GPUs"),
                std::string::npos)
          << e.what();
    }
  }
  // Not a number: not a GPU's series, left out as before.
  NodeWindow x("n1", 0, 15, 15);
  x.add(window_entry("DCGM_FI_DEV_GPU_TEMP"), {gpu_series("x1", {{0, 50}})});
  EXPECT_TRUE(x.header().gpus.empty());
}

// Thousands of processes on one GPU, their values' series in any order:
// each lands on its own pid, each list complete.
TEST(NodeWindow, ThousandsOfListedProcessesLandOnTheirPids) {
  constexpr int kProcs = 3000;
  NodeWindow w("n1", 0, 30, 15);
  w.add(window_entry("DCGM_FI_DEV_GPU_UTIL"),
        {gpu_series("0", {{0, 1}, {15, 1}, {30, 1}})});
  w.add(window_entry("gpudoctor_gpu_processes"),
        {process_series({{"gpu", "0"}},
                        {{0, kProcs}, {15, kProcs}, {30, kProcs}})});
  std::vector<Series> memory, sm;
  for (int p = 0; p < kProcs; ++p) {
    const std::string pid = std::to_string(1000 + p);
    memory.push_back(
        process_series({{"gpu", "0"}, {"pid", pid}},
                       {{0, 1000.0 + p}, {15, 2000.0 + p}, {30, 3000.0 + p}}));
    // The second entry's series in the other order, one missing a step.
    const std::string back = std::to_string(1000 + kProcs - 1 - p);
    sm.push_back(process_series({{"gpu", "0"}, {"pid", back}},
                                p == 0 ? std::vector<Point>{{30, 7}}
                                       : std::vector<Point>{{0, 1}, {30, 3}}));
  }
  w.add(window_entry("gpudoctor_process_gpu_memory_bytes"), memory);
  w.add(window_entry("gpudoctor_process_sm_utilization_percent"), sm);
  auto out = samples(w);
  ASSERT_EQ(out.size(), 3u);
  for (const Sample& s : out) {
    ASSERT_TRUE(s.gpus[0].processes);
    ASSERT_EQ(s.gpus[0].processes->size(), static_cast<size_t>(kProcs));
  }
  const auto& at0 = *out[0].gpus[0].processes;
  const auto& at30 = *out[2].gpus[0].processes;
  for (int p = 0; p < kProcs; ++p) {
    EXPECT_EQ(at0[p].pid, 1000u + p);
    EXPECT_EQ(at30[p].used_bytes, 3000u + p);
    const bool last = p == kProcs - 1;  // pid 3999: only at 30, as 7
    EXPECT_EQ(at0[p].sm_util_pct, last ? opt<double>() : opt<double>(1));
    EXPECT_EQ(at30[p].sm_util_pct, last ? 7 : 3);
  }
}

// Only what the trace can carry: Xid codes 1 to 65535, whole; a power
// limit no GPU has is left out.
TEST(NodeWindow, ValuesTheTraceRefusesAreLeftOut) {
  NodeWindow w("n1", 0, 75, 15);
  w.add(window_entry("DCGM_FI_DEV_GPU_UTIL"), {gpu_series("0", {{0, 1}})});
  w.add(
      window_entry("DCGM_FI_DEV_XID_ERRORS"),
      {gpu_series(
          "0",
          {{0, 0}, {15, 0.5}, {30, 70000}, {45, 79}, {60, 79}, {75, 65535}})});
  w.add(window_entry("DCGM_FI_DEV_POWER_MGMT_LIMIT"),
        {gpu_series("0", {{0, 1e308}})});
  std::vector<int> codes;
  for (const Sample& s : samples(w))
    for (const Event& e : s.events) codes.push_back(*e.code);
  EXPECT_EQ(codes, (std::vector<int>{79, 65535}));
  EXPECT_FALSE(w.header().gpus[0].power_limit_w);
}

}  // namespace
}  // namespace gd::promsource
