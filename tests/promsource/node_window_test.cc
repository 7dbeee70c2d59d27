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

const Entry& entry(const std::string& query) {
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
  w.add(entry("DCGM_FI_DEV_GPU_TEMP"),
        {gpu_series("0", {{1000, 71}, {1015, 72}, {1017, 99}, {1030, NAN}})});
  w.add(entry("DCGM_FI_DEV_GPU_UTIL"), {gpu_series("1", {{1060, 100}})});
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
  w.add(entry("gpudoctor_gpu_memory_used_bytes"),
        {gpu_series("0", {{0, 1000}})});
  w.add(entry("DCGM_FI_DEV_FB_USED"), {gpu_series("0", {{0, 1}, {15, 2}})});
  // Two exporters for one GPU: the first series is kept.
  w.add(entry("DCGM_FI_DEV_GPU_TEMP"),
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
  w.add(entry("DCGM_FI_DEV_GPU_UTIL"), {mig, other, bad});
  EXPECT_TRUE(samples(w).empty());
  EXPECT_TRUE(w.header().gpus.empty());
}

TEST(NodeWindow, XidChangesAreEvents) {
  NodeWindow w("n1", 0, 60, 15);
  w.add(entry("DCGM_FI_DEV_XID_ERRORS"),
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
  w.add(entry("DCGM_FI_DEV_FB_USED"), {gpu_series("0", {{0, 100}})});
  w.add(entry("DCGM_FI_DEV_FB_FREE"), {gpu_series("0", {{0, 900}})});
  w.add(entry("gpudoctor_gpu_sm_clock_max_mhz"),
        {gpu_series("0", {{0, 1900}, {15, 1980}})});
  Series host;
  host.points = {{0, 64e9}, {15, 64e9}};
  w.add(entry("max(node_memory_MemTotal_bytes{$I})"), {host});
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
  w.add(entry("max(node_load1{$I})"), {s});
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
  w.add(entry("sum by (mode) (rate(node_cpu_seconds_total{$I}$W))"),
        {mode("user", {{0, 3}, {15, 6}}), mode("system", {{0, 1}, {15, 1}}),
         mode("idle", {{0, 3.5}, {15, 0.5}}), mode("iowait", {{0, 0.5}}),
         mode("steal", {{15, 0.5}})});
  // serve's own series come after and give only what node_exporter did not.
  Series serve_steal;
  serve_steal.points = {{0, 99}, {30, 99}};
  w.add(entry("max($S(gpudoctor_host_cpu_steal_percent))"), {serve_steal});
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

}  // namespace
}  // namespace gd::promsource
