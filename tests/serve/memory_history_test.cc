// serve --no-db's history: the last minutes in memory, bounded by age and
// by bytes, answered in the form of the store's.
#include "serve/memory_history.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace gd {
namespace {

using json = nlohmann::json;

Sample sample_at(double t, double util, size_t processes = 0) {
  Sample s;
  s.t = t;
  GpuSample g;
  g.index = 0;
  g.util_pct = util;
  s.gpus.push_back(g);
  for (size_t i = 0; i < processes; ++i) {
    ProcessSample p;
    p.pid = static_cast<uint32_t>(100 + i);
    p.cmdline = std::string(1000, 'x');
    s.processes.push_back(p);
  }
  return s;
}

HistoryQuery util_query(double since, double until, double step = 0) {
  HistoryQuery q;
  q.metric = "gpu.util_pct";
  q.since = since;
  q.until = until;
  q.step = step;
  return q;
}

std::vector<double> times_of(const History& h, const HistoryQuery& q) {
  json j = json::parse(h.query_json(q));
  std::vector<double> out;
  for (const auto& s : j["series"])
    for (const auto& p : s["points"]) out.push_back(p[0].get<double>());
  return out;
}

TEST(MemoryHistory, KeepsTheLastMinutesAndSaysSo) {
  auto h = memory_history(60);
  for (int t = 0; t <= 120; t += 10) h->append(sample_at(1000 + t, t));
  EXPECT_EQ(times_of(*h, util_query(0, 2000)),
            (std::vector<double>{1060, 1070, 1080, 1090, 1100, 1110, 1120}));
  json j = json::parse(h->query_json(util_query(1080, 1100)));
  EXPECT_EQ(j["kept_in_memory_s"], 60);
  EXPECT_EQ(j["series"][0]["gpu"], 0);
  EXPECT_EQ(j["series"][0]["points"],
            json::parse("[[1080,80],[1090,90],[1100,100]]"));
  // Averaged per step as the store's answers are.
  j = json::parse(h->query_json(util_query(1060, 1119, 30)));
  EXPECT_EQ(j["series"][0]["points"],
            json::parse("[[1050,65],[1080,90],[1110,110]]"));
}

TEST(MemoryHistory, TheByteBoundDropsTheOldestFirst) {
  const size_t one = approx_sample_bytes(sample_at(0, 0, 50));
  EXPECT_GT(one, 50u * 1000u);
  auto h = memory_history(3600, 3 * one + one / 2);
  for (int t = 0; t < 10; ++t) h->append(sample_at(t, t, 50));
  EXPECT_EQ(times_of(*h, util_query(0, 100)), (std::vector<double>{7, 8, 9}));
  // One sample larger than the bound still stays (the newest).
  auto tiny = memory_history(3600, 1);
  tiny->append(sample_at(5, 5, 50));
  EXPECT_EQ(times_of(*tiny, util_query(0, 100)), (std::vector<double>{5}));
}

TEST(MemoryHistory, UnknownMetricIsAQueryError) {
  auto h = memory_history();
  HistoryQuery q = util_query(0, 1);
  q.metric = "gpu.nope";
  EXPECT_THROW(h->query_json(q), HistoryQueryError);
}

TEST(MemoryHistory, ScanPassesTheRangeAndStopsWhenAsked) {
  auto h = memory_history();
  TraceHeader header;
  header.host.hostname = "node7";
  h->set_header(header);
  for (int t = 0; t < 5; ++t) h->append(sample_at(t, t));
  std::vector<double> seen;
  EXPECT_EQ(h->scan(
                1, 3,
                [&](const Sample& s) {
                  seen.push_back(s.t);
                  return s.t < 2;
                },
                nullptr),
            2u);
  EXPECT_EQ(seen, (std::vector<double>{1, 2}));
  EXPECT_EQ(h->header().host.hostname, "node7");
}

TEST(MemoryHistory, AlertsFireAndResolveInPlace) {
  auto h = memory_history();
  AlertRecord a;
  a.key = "thermal-throttling:0";
  a.id = "thermal-throttling";
  a.severity = "warning";
  a.gpus = {0};
  a.started_at = 100;
  a.fired_at = 130;
  h->record_alert(a);
  a.resolved_at = 200;
  h->record_alert(a);
  json j = json::parse(h->alerts_json(0, 1000));
  ASSERT_EQ(j["alerts"].size(), 1u);
  EXPECT_EQ(j["alerts"][0]["resolved_at"], 200);
  EXPECT_EQ(j["alerts"][0]["ended"], "resolved");
  EXPECT_TRUE(json::parse(h->alerts_json(300, 400))["alerts"].empty());
  for (int i = 0; i < 1005; ++i) {
    a.started_at = 1000 + i;
    h->record_alert(a);
  }
  EXPECT_EQ(json::parse(h->alerts_json(0, 1e9))["alerts"].size(),
            kMemoryHistoryMaxAlerts);
}

}  // namespace
}  // namespace gd
