// The fleet now (fleet_state.h): the round's batched queries, and their
// answers turned into each node's header and sample, with when it was last
// scraped; hostile answers bounded (names, GPUs, nodes).
#include "promsource/fleet_state.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "promsource/fleet_history.h"
#include "promsource/series_table.h"

namespace gd::promsource {
namespace {

using http::prom::Series;

constexpr double kT = 1732262400.0;

size_t fleet_entry_of(const std::string& query) {
  const auto all = entries();
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i].query == query) return i;
  ADD_FAILURE() << "no entry " << query;
  return 0;
}

Series series(std::vector<std::pair<std::string, std::string>> labels, double v,
              double t = kT) {
  Series s;
  s.labels = std::move(labels);
  std::sort(s.labels.begin(), s.labels.end());
  s.points.push_back({t, v});
  return s;
}

Series gpu_series(const std::string& node, int gpu, size_t entry, double v) {
  return series({{"Hostname", node},
                 {"gpu", std::to_string(gpu)},
                 {"modelName", "NVIDIA H100 80GB HBM3"},
                 {kEntryLabel, std::to_string(entry)}},
                v);
}

Series seen(const std::string& node, int gpu, double at) {
  return series({{"Hostname", node},
                 {"gpu", std::to_string(gpu)},
                 {kEntryLabel, std::to_string(kLastSeenEntry)}},
                at);
}

// The answers of `batches` from one pile of tagged series: each series goes
// to the batch that asked for its entry.
std::vector<std::vector<Series>> answer(const std::vector<QueryBatch>& batches,
                                        const std::vector<Series>& all) {
  std::vector<std::vector<Series>> out(batches.size());
  for (const auto& s : all) {
    const std::string& tag = s.label(kEntryLabel);
    for (size_t b = 0; b < batches.size(); ++b)
      for (size_t e : batches[b].entries)
        if (std::to_string(e) == tag) out[b].push_back(s);
  }
  return out;
}

TEST(FleetBatches, FewBoundedQueriesForTheWholeFleet) {
  const std::string match = "{cluster=\"train-a\"}";
  auto batches = fleet_batches(match);
  ASSERT_FALSE(batches.empty());
  // The sample times and serve's addresses: one query.
  EXPECT_EQ(batches[0].entries,
            (std::vector<size_t>{kLastSeenEntry, kServeInstanceEntry}));
  EXPECT_NE(batches[0].query.find("timestamp(DCGM_FI_DEV_GPU_UTIL" + match),
            std::string::npos);
  EXPECT_NE(batches[0].query.find(
                "count by (Hostname, instance) (gpudoctor_build_info" + match),
            std::string::npos)
      << batches[0].query;
  std::set<size_t> asked;
  for (const auto& b : batches) {
    EXPECT_LE(b.entries.size(), kFleetBatchEntries);
    EXPECT_LE(b.query.size(), kMaxBatchQueryBytes);
    for (size_t e : b.entries) {
      EXPECT_TRUE(asked.insert(e).second) << e;
      if (e == kLastSeenEntry || e == kServeInstanceEntry) continue;
      EXPECT_EQ(entries()[e].scope, Scope::kGpu);
      EXPECT_NE(b.query.find(std::string(entries()[e].query) + match),
                std::string::npos);
    }
  }
  // Every GPU sample of the table in fewer than 10 queries (issue 43's
  // goal), not one per node.
  EXPECT_TRUE(asked.count(fleet_entry_of("DCGM_FI_DEV_GPU_UTIL")));
  EXPECT_TRUE(asked.count(fleet_entry_of("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL")));
  EXPECT_LT(batches.size(), 10u);
}

TEST(FleetState, EachNodesGpusFromTheFleetsAnswers) {
  auto batches = fleet_batches("");
  const size_t util = fleet_entry_of("DCGM_FI_DEV_GPU_UTIL");
  const size_t used = fleet_entry_of("DCGM_FI_DEV_FB_USED");
  const size_t free_mib = fleet_entry_of("DCGM_FI_DEV_FB_FREE");
  const size_t dbe = fleet_entry_of("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL");
  std::vector<Series> all = {
      seen("gpu-a", 0, kT - 10), seen("gpu-a", 1, kT - 4),
      seen("gpu-b", 0, kT - 150),
      // Not a node name: it could not be asked for; left out.
      seen("bad name", 0, kT), gpu_series("gpu-a", 0, util, 97),
      gpu_series("gpu-a", 1, util, 3), gpu_series("gpu-a", 0, used, 1024),
      gpu_series("gpu-a", 0, free_mib, 1024), gpu_series("gpu-a", 1, dbe, 2),
      gpu_series("gpu-b", 0, util, 50),
      // A node no sample time lists: not a node of this round.
      gpu_series("gpu-c", 0, util, 1)};
  // A MIG instance's series is not the GPU's.
  auto mig = gpu_series("gpu-a", 0, util, 11);
  mig.labels.push_back({"GPU_I_ID", "1"});
  all.push_back(mig);
  FleetState st = fleet_state(kT, batches, answer(batches, all));
  EXPECT_EQ(st.error, "");
  ASSERT_EQ(st.nodes.size(), 2u);
  const FleetNode& a = st.nodes[0];
  EXPECT_EQ(a.node, "gpu-a");
  EXPECT_EQ(a.last_seen, kT - 4);
  EXPECT_EQ(a.error, "");
  EXPECT_EQ(a.sample.t, kT);
  ASSERT_EQ(a.sample.gpus.size(), 2u);
  EXPECT_EQ(a.sample.gpus[0].util_pct, 97);
  EXPECT_EQ(a.sample.gpus[1].util_pct, 3);
  EXPECT_EQ(a.sample.gpus[0].mem_used_bytes, 1024ull << 20);
  EXPECT_EQ(a.sample.gpus[1].ecc_dbe_volatile_total, 2u);
  ASSERT_EQ(a.header.gpus.size(), 2u);
  EXPECT_EQ(a.header.gpus[0].memory_total_bytes, 2048ull << 20);
  EXPECT_EQ(a.header.gpus[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(a.header.host.hostname, "gpu-a");
  EXPECT_EQ(st.nodes[1].node, "gpu-b");
  EXPECT_EQ(st.nodes[1].last_seen, kT - 150);
}

TEST(FleetState, ANodeWithoutHostnameIsItsInstancesHost) {
  auto batches = fleet_batches("");
  const size_t util = fleet_entry_of("DCGM_FI_DEV_GPU_UTIL");
  std::vector<Series> all = {
      series({{"gpu", "0"},
              {"instance", "10.0.0.7:9400"},
              {kEntryLabel, std::to_string(kLastSeenEntry)}},
             kT),
      series({{"gpu", "0"},
              {"instance", "10.0.0.7:9400"},
              {kEntryLabel, std::to_string(util)}},
             42)};
  FleetState st = fleet_state(kT, batches, answer(batches, all));
  ASSERT_EQ(st.nodes.size(), 1u);
  EXPECT_EQ(st.nodes[0].node, "10.0.0.7");
  ASSERT_EQ(st.nodes[0].sample.gpus.size(), 1u);
  EXPECT_EQ(st.nodes[0].sample.gpus[0].util_pct, 42);
}

Series serve_at(const std::string& hostname, const std::string& instance) {
  std::vector<std::pair<std::string, std::string>> labels = {
      {"instance", instance},
      {kEntryLabel, std::to_string(kServeInstanceEntry)}};
  if (!hostname.empty()) labels.push_back({"Hostname", hostname});
  return series(std::move(labels), 1);
}

TEST(FleetState, EachNodesServeAddressFromItsBuildInfo) {
  auto batches = fleet_batches("");
  std::vector<Series> all = {
      seen("gpu-a", 0, kT), seen("gpu-b", 0, kT), seen("gpu-c", 0, kT),
      seen("gpu-d", 0, kT), serve_at("gpu-a", "gpu-a.example:9856"),
      // Scraped twice: the first address in order, every round the same.
      serve_at("gpu-b", "10.0.0.9:9856"), serve_at("gpu-b", "10.0.0.10:9856"),
      // An address a link cannot be built from: none.
      serve_at("gpu-c", "gpu-c:9856/\"><script>"),
      // A serve whose node has no GPU series this round: not a node.
      serve_at("gpu-z", "gpu-z:9856")};
  FleetState st = fleet_state(kT, batches, answer(batches, all));
  ASSERT_EQ(st.nodes.size(), 4u);
  EXPECT_EQ(st.nodes[0].serve_instance, "gpu-a.example:9856");
  EXPECT_EQ(st.nodes[1].serve_instance, "10.0.0.10:9856");
  EXPECT_EQ(st.nodes[2].serve_instance, "");
  // Scraped only through dcgm-exporter: no serve, no link.
  EXPECT_EQ(st.nodes[3].serve_instance, "");
}

TEST(ServeInstance, OnlyHostAndPortCharacters) {
  EXPECT_EQ(serve_instance_of("gpu-a:9856"), "gpu-a:9856");
  EXPECT_EQ(serve_instance_of("10.0.0.7:9856"), "10.0.0.7:9856");
  EXPECT_EQ(serve_instance_of("node_1.dc.example:1"), "node_1.dc.example:1");
  EXPECT_EQ(serve_instance_of("[fd00::7]:9856"), "[fd00::7]:9856");
  EXPECT_EQ(serve_instance_of("gpu-a:65535"), "gpu-a:65535");
  for (const char* bad :
       {"", "gpu-a", "gpu-a:", ":9856", "gpu-a:0", "gpu-a:65536", "gpu-a:09856",
        "gpu-a:98x", "gpu a:9856", "gpu-a/x:9856", "user@gpu-a:9856",
        "javascript:alert(1)", "[fd00::7:9856", "[]:9856", "[fd00::g]:9856",
        "fd00::7:9856", "gpu-a:123456", "gpu-a:9856\n", "\"gpu-a\":9856"})
    EXPECT_EQ(serve_instance_of(bad), "") << bad;
  // Capped: a DNS name's length and a port.
  const std::string longest(253, 'a');
  EXPECT_EQ(serve_instance_of(longest + ":9856"), longest + ":9856");
  EXPECT_EQ(serve_instance_of(std::string(300, 'a') + ":9856"), "");
}

TEST(FleetState, AGpuPastTheBoundRefusesItsNodeOnly) {
  auto batches = fleet_batches("");
  const size_t util = fleet_entry_of("DCGM_FI_DEV_GPU_UTIL");
  std::vector<Series> all = {seen("gpu-a", 0, kT), seen("gpu-lies", 0, kT),
                             gpu_series("gpu-a", 0, util, 10),
                             gpu_series("gpu-lies", 0, util, 10),
                             gpu_series("gpu-lies", 4096, util, 10)};
  FleetState st = fleet_state(kT, batches, answer(batches, all));
  ASSERT_EQ(st.nodes.size(), 2u);
  EXPECT_EQ(st.nodes[0].error, "");
  EXPECT_NE(st.nodes[1].error.find("at most 64 GPUs"), std::string::npos)
      << st.nodes[1].error;
  EXPECT_TRUE(st.nodes[1].sample.gpus.empty());
}

TEST(FleetState, AtMostTheBoundOfNodesTheRestCounted) {
  auto batches = fleet_batches("");
  std::vector<Series> all;
  for (size_t i = 0; i < kMaxFleetNodes + 3; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "n%05zu", i);
    all.push_back(seen(name, 0, kT));
  }
  FleetState st = fleet_state(kT, batches, answer(batches, all));
  EXPECT_EQ(st.nodes.size(), kMaxFleetNodes);
  EXPECT_EQ(st.nodes_left_out, 3u);
  EXPECT_EQ(st.nodes.back().node, "n02047");
}

TEST(FleetState, SeriesNamingNoHostAreCountedNotListed) {
  auto batches = fleet_batches("");
  std::vector<Series> all = {seen("gpu-a", 0, kT),
                             seen("evil\x1b]0;pwned\x07", 0, kT),
                             seen("evil\x1b]0;pwned\x07", 1, kT),
                             seen(std::string(300, 'x') + " y", 0, kT)};
  FleetState st = fleet_state(kT, batches, answer(batches, all));
  ASSERT_EQ(st.nodes.size(), 1u);
  EXPECT_EQ(st.nodes[0].node, "gpu-a");
  EXPECT_EQ(st.series_unnamed, 3u);
}

TEST(RecentNodes, NewestSampleTimeOfEachNodeInTheLastHour) {
  const std::string q = recent_nodes_query("{cluster=\"a\"}");
  EXPECT_NE(q.find("timestamp(DCGM_FI_DEV_GPU_UTIL{cluster=\"a\"})[3600s:60s]"),
            std::string::npos)
      << q;
  auto nodes = recent_nodes({series({{"Hostname", "gpu-a"}}, kT - 1200),
                             series({{"Hostname", "gpu-a"}}, kT - 900),
                             series({{"instance", "10.0.0.7:9400"}}, kT - 60),
                             series({{"Hostname", "no good"}}, kT)});
  EXPECT_EQ(nodes, (std::map<std::string, double>{{"10.0.0.7", kT - 60},
                                                  {"gpu-a", kT - 900}}));
}

TEST(FleetState, NoAnswerNoNodes) {
  auto batches = fleet_batches("");
  FleetState st = fleet_state(kT, batches, {});
  EXPECT_TRUE(st.nodes.empty());
  EXPECT_EQ(st.error, "");
}

}  // namespace
}  // namespace gd::promsource

namespace gd::promsource {
namespace {

// A series of `points` (time, value) tagged with `entry`.
Series ranged(const std::string& node, size_t entry,
              std::vector<std::pair<double, double>> points) {
  Series s;
  s.labels = {
      {"Hostname", node}, {"gpu", "0"}, {kEntryLabel, std::to_string(entry)}};
  std::sort(s.labels.begin(), s.labels.end());
  for (auto [t, v] : points) s.points.push_back({t, v});
  return s;
}

// The fleet's last minutes: each grid step's scrape time makes a node's
// scrapes one sample each, at the scrape's time.
TEST(FleetHistory, EachScrapeOnceAtItsOwnTime) {
  auto batches = fleet_batches("");
  const size_t util = fleet_entry_of("DCGM_FI_DEV_GPU_UTIL");
  // Scraped every 30 s, on a grid of 15 s: two steps find each scrape.
  const double s0 = kT - 45;
  std::vector<Series> all = {
      ranged("gpu-a", kLastSeenEntry,
             {{s0, kT - 50},
              {s0 + 15, kT - 50},
              {s0 + 30, kT - 20},
              {s0 + 45, kT - 20}}),
      ranged("gpu-a", util,
             {{s0, 10}, {s0 + 15, 10}, {s0 + 30, 90}, {s0 + 45, 90}}),
      // Listed at the last steps only: it began to report late.
      ranged("gpu-b", kLastSeenEntry, {{s0 + 30, kT - 29}, {s0 + 45, kT - 14}}),
      ranged("gpu-b", util, {{s0 + 30, 5}, {s0 + 45, 6}})};
  FleetBuilder b(s0, kT, 15);
  auto answers = answer(batches, all);
  for (size_t i = 0; i < batches.size(); ++i)
    b.add(batches[i], std::move(answers[i]));
  auto h = b.finish_history();
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0].node, "gpu-a");
  ASSERT_EQ(h[0].samples.size(), 2u);
  EXPECT_EQ(h[0].samples[0].t, kT - 50);
  EXPECT_EQ(h[0].samples[0].gpus.at(0).util_pct, 10);
  EXPECT_EQ(h[0].samples[1].t, kT - 20);
  EXPECT_EQ(h[0].samples[1].gpus.at(0).util_pct, 90);
  EXPECT_EQ(h[0].header.host.hostname, "gpu-a");
  ASSERT_EQ(h[1].samples.size(), 2u);
  EXPECT_EQ(h[1].samples[1].t, kT - 14);
  EXPECT_EQ(h[1].samples[1].gpus.at(0).util_pct, 6);
}

}  // namespace
}  // namespace gd::promsource
