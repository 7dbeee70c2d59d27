// The dashboard's API additions (serve/api.h): several metrics in one
// history request, step=auto, the alert history, and the job of each
// process; with a store-backed History where the answer depends on data.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "serve/api.h"
#include "serve/history.h"
#include "trace/trace_io.h"

namespace gd {
namespace {

using nlohmann::json;

struct TempDb {
  std::filesystem::path dir;
  TempDb() {
    char tmpl[] = "/tmp/gd_web_api_XXXXXX";
    dir = mkdtemp(tmpl);
  }
  ~TempDb() { std::filesystem::remove_all(dir); }
  std::string path() const { return (dir / "h.db").string(); }
};

Sample sample_at(double t, int gpus, double util) {
  Sample s;
  s.t = t;
  for (int i = 0; i < gpus; ++i) {
    GpuSample g;
    g.index = i;
    g.util_pct = util + i;
    g.temp_c = 40 + i;
    g.processes = std::vector<GpuProcess>{
        {static_cast<uint32_t>(100 + i), uint64_t{1} << 30, "compute"}};
    s.gpus.push_back(g);
  }
  s.host.cpu_util_pct = 12.5;
  return s;
}

TEST(WebApi, SeveralMetricsInOneHistoryRequest) {
  TempDb db;
  auto h = open_history(db.path(), 7 * 86400.0);
  const double t0 = 1'700'000'000;
  for (int i = 0; i < 30; ++i) h->append(sample_at(t0 + i, 2, 50));
  auto r = api_history(h.get(),
                       {{"metric", "gpu.util_pct,gpu.temp_c,host.cpu_util_pct"},
                        {"since", std::to_string(t0)},
                        {"until", std::to_string(t0 + 29)}},
                       t0 + 30);
  ASSERT_EQ(r.status, 200) << r.body;
  auto j = json::parse(r.body);
  ASSERT_EQ(j["results"].size(), 3u);
  EXPECT_EQ(j["results"][0]["metric"], "gpu.util_pct");
  EXPECT_EQ(j["results"][1]["metric"], "gpu.temp_c");
  ASSERT_EQ(j["results"][1]["series"].size(), 2u);
  EXPECT_EQ(j["results"][1]["series"][1]["gpu"], 1);
  EXPECT_EQ(j["results"][1]["series"][1]["points"].size(), 30u);
  EXPECT_EQ(j["results"][1]["series"][1]["points"][0][1], 41.0);
  EXPECT_EQ(j["results"][2]["series"][0]["gpu"], nullptr);
  EXPECT_EQ(j["results"][2]["series"][0]["points"][5][1], 12.5);
  // The single-metric form keeps its old shape.
  auto one = json::parse(
      api_history(h.get(), {{"metric", "gpu.util_pct"}, {"since", "1h"}},
                  t0 + 30)
          .body);
  EXPECT_EQ(one["metric"], "gpu.util_pct");
  EXPECT_TRUE(one.contains("series"));
  EXPECT_FALSE(one.contains("results"));
}

TEST(WebApi, MetricListErrors) {
  TempDb db;
  auto h = open_history(db.path(), 7 * 86400.0);
  for (const char* bad : {"gpu.util_pct,", ",gpu.util_pct", "gpu.util_pct,,x",
                          "gpu.util_pct,bogus"}) {
    auto r = api_history(h.get(), {{"metric", bad}}, 1e9);
    EXPECT_EQ(r.status, 400) << bad;
    EXPECT_TRUE(json::parse(r.body).contains("error"));
  }
  std::string many = "gpu.util_pct";
  for (int i = 0; i < 40; ++i) many += ",gpu.temp_c" + std::to_string(i);
  EXPECT_EQ(api_history(h.get(), {{"metric", many}}, 1e9).status, 400);
}

TEST(WebApi, AutoStepFollowsTheRangeAndTheStoredTier) {
  // 15 minutes: every sample; an hour: 5 s; a day: a minute; a week: 10 min.
  EXPECT_EQ(auto_step(0, 900, 900, 0), 0);
  EXPECT_EQ(auto_step(0, 3600, 3600, 0), 5);
  EXPECT_EQ(auto_step(0, 21600, 21600, 0), 15);
  EXPECT_EQ(auto_step(0, 86400, 86400, 0), 60);
  EXPECT_EQ(auto_step(0, 7 * 86400, 7 * 86400, 60), 600);
  // Ten minutes of data kept only as minute averages: a minute, not raw.
  EXPECT_EQ(auto_step(0, 600, 3 * 86400, 60), 60);
}

TEST(WebApi, AutoStepReachesTheStore) {
  TempDb db;
  auto h = open_history(db.path(), 7 * 86400.0);
  const double t0 = 1'700'000'000;
  for (int i = 0; i < 120; ++i) h->append(sample_at(t0 + i, 1, i));
  auto j = json::parse(api_history(h.get(),
                                   {{"metric", "gpu.util_pct"},
                                    {"since", std::to_string(t0 - 3480)},
                                    {"until", std::to_string(t0 + 120)},
                                    {"step", "auto"}},
                                   t0 + 120)
                           .body);
  EXPECT_EQ(j["step"], 5.0);
  // 120 samples in 5 s buckets.
  EXPECT_EQ(j["series"][0]["points"].size(), 24u);
  EXPECT_EQ(j["series"][0]["points"][0][1], 2.0);  // mean of 0..4
}

TEST(WebApi, AlertHistoryRecordsFiredAndCleared) {
  TempDb db;
  const double t0 = 1'700'000'000;
  {
    auto h = open_history(db.path(), 7 * 86400.0);
    h->append(sample_at(t0, 1, 1));
    AlertRecord a{"thermal-throttling/0",
                  "thermal-throttling",
                  "warning",
                  "GPU 0 is thermally throttled",
                  "evidence <img src=x onerror=alert(1)>",
                  "cool it",
                  {0},
                  t0,
                  t0 + 60,
                  0};
    h->record_alert(a);
    auto open =
        json::parse(api_alerts(h.get(), {{"since", "2h"}}, t0 + 100).body);
    ASSERT_EQ(open["alerts"].size(), 1u);
    EXPECT_EQ(open["alerts"][0]["resolved_at"], nullptr);
    EXPECT_EQ(open["alerts"][0]["evidence"],
              "evidence <img src=x onerror=alert(1)>");
    a.resolved_at = t0 + 300;
    h->record_alert(a);  // the same alert, now cleared: updated, not added
    // A second one that is still firing when serve stops.
    h->record_alert({"gpu-lost/1",
                     "gpu-lost",
                     "critical",
                     "GPU 1 is lost",
                     "",
                     "",
                     {1},
                     t0 + 400,
                     t0 + 400,
                     0});
    h->append(sample_at(t0 + 500, 1, 1));
    auto j = json::parse(api_alerts(h.get(), {{"since", "2h"}}, t0 + 600).body);
    ASSERT_EQ(j["alerts"].size(), 2u);
    EXPECT_EQ(j["alerts"][0]["id"], "thermal-throttling");
    EXPECT_EQ(j["alerts"][0]["gpus"], json::array({0}));
    EXPECT_EQ(j["alerts"][0]["fired_at"], t0 + 60);
    EXPECT_EQ(j["alerts"][0]["resolved_at"], t0 + 300);
    EXPECT_EQ(j["alerts"][0]["ended"], "resolved");
    EXPECT_EQ(j["alerts"][1]["resolved_at"], nullptr);
    // Outside the range: none.
    auto none = json::parse(api_alerts(h.get(),
                                       {{"since", std::to_string(t0 - 900)},
                                        {"until", std::to_string(t0 - 1)}},
                                       t0 + 600)
                                .body);
    EXPECT_EQ(none["alerts"].size(), 0u);
    h->flush();
  }
  // Reopened: the alert left firing ended when serve stopped.
  auto h = open_history(db.path(), 7 * 86400.0);
  auto j = json::parse(api_alerts(h.get(), {{"since", "2h"}}, t0 + 900).body);
  ASSERT_EQ(j["alerts"].size(), 2u);
  EXPECT_EQ(j["alerts"][1]["ended"], "serve stopped");
  EXPECT_EQ(j["alerts"][1]["resolved_at"], t0 + 500);
}

TEST(WebApi, AlertsWithoutStoreAndBadRanges) {
  EXPECT_EQ(api_alerts(nullptr, {}, 1e9).status, 503);
  TempDb db;
  auto h = open_history(db.path(), 7 * 86400.0);
  EXPECT_EQ(api_alerts(h.get(), {{"since", "x"}}, 1e9).status, 400);
  EXPECT_EQ(api_alerts(h.get(), {{"since", "1h"}, {"until", "2h"}}, 1e9).status,
            400);
  EXPECT_EQ(api_alerts(h.get(), {{"since", "1h"}, {"since", "2h"}}, 1e9).status,
            400);
}

TEST(WebApi, ProcessesNameTheirJob) {
  TraceReader reader(std::string(GD_TEST_DATA) + "/scenario_4gpu.jsonl");
  Snapshot s;
  s.header = std::make_shared<TraceHeader>(reader.header());
  auto sample = std::make_shared<Sample>();
  ASSERT_TRUE(reader.next(*sample));
  s.sample = sample;
  auto j = json::parse(api_processes(s, {}).body);
  ASSERT_FALSE(j["processes"].empty());
  for (const auto& p : j["processes"]) {
    ASSERT_TRUE(p.contains("job")) << p.dump();
    EXPECT_GE(p["job"]["ranks"].get<int>(), 1);
  }
}

}  // namespace
}  // namespace gd
