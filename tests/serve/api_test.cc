#include "serve/api.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "serve/serve_options.h"
#include "trace/trace_io.h"

namespace gd {
namespace {

using nlohmann::json;

std::shared_ptr<Snapshot> scenario_snapshot() {
  TraceReader reader(std::string(GD_TEST_DATA) + "/scenario_4gpu.jsonl");
  auto s = std::make_shared<Snapshot>();
  s->header = std::make_shared<TraceHeader>(reader.header());
  auto sample = std::make_shared<Sample>();
  EXPECT_TRUE(reader.next(*sample));
  s->sample = sample;
  for (const auto& g : sample->gpus)
    s->gpu_health.push_back({g.index, true, false, sample->t});
  s->collections_total = 3;
  s->started_at = sample->t - 10;
  return s;
}

// Records the query it was asked; "bogus" is an unknown metric.
class FakeHistory : public History {
 public:
  void set_header(const TraceHeader&) override {}
  void append(const Sample&) override {}
  void flush() override {}
  void maintain(double) override {}
  std::string query_json(const HistoryQuery& q) const override {
    if (q.metric == "bogus") throw HistoryQueryError("unknown metric 'bogus'");
    last = q;
    return "{\"series\": []}";
  }
  mutable HistoryQuery last;
};

TEST(Api, StatusIsHeaderAndSampleInTraceFormat) {
  auto s = scenario_snapshot();
  auto r = api_status(*s, s->sample->t + 2);
  ASSERT_EQ(r.status, 200);
  auto j = json::parse(r.body);
  EXPECT_EQ(j["header"]["format"], "gpudoctor-trace");
  EXPECT_EQ(j["header"]["gpus"].size(), 4u);
  EXPECT_EQ(j["sample"]["gpus"][0]["util_pct"], 97.0);
  EXPECT_EQ(j["collect"]["sample_age_s"], 2.0);
  // The two parts are what header_from_json / sample_from_json accept.
  EXPECT_NO_THROW(header_from_json(j["header"].dump(), "status"));
  EXPECT_NO_THROW(sample_from_json(j["sample"].dump(), "status"));
}

TEST(Api, ProcessesJoinNvmlAndProcAndFilterByGpu) {
  auto s = scenario_snapshot();
  auto j = json::parse(api_processes(*s, {{"gpu", "2"}}).body);
  ASSERT_EQ(j["processes"].size(), 2u);
  EXPECT_EQ(j["processes"][0]["pid"], 5100);
  EXPECT_EQ(j["processes"][0]["user"], "bob");
  EXPECT_EQ(j["processes"][1]["type"], "compute+graphics");
  auto all = json::parse(api_processes(*s, {}).body);
  EXPECT_EQ(all["processes"].size(), 5u);
}

TEST(Api, BadParametersAre400WithOneLineJson) {
  auto s = scenario_snapshot();
  for (const QueryParams& p :
       {QueryParams{{"gpu", "x"}}, QueryParams{{"gpu", "-1"}},
        QueryParams{{"gpu", "1"}, {"gpu", "2"}}}) {
    auto r = api_processes(*s, p);
    EXPECT_EQ(r.status, 400);
    auto j = json::parse(r.body);
    ASSERT_TRUE(j.contains("error"));
    EXPECT_EQ(j["error"].get<std::string>().find('\n'), std::string::npos);
  }
}

TEST(Api, FindingsCarryAlertState) {
  auto s = scenario_snapshot();
  TrackedAlert a;
  a.key = "gpu-lost|1";
  a.finding.id = "gpu-lost";
  a.finding.severity = "critical";
  a.finding.gpus = {1};
  a.state = "firing";
  a.since = 100;
  a.fired_at = 100;
  s->alerts = {a};
  s->evaluated_at = 105;
  auto j = json::parse(api_findings(*s).body);
  ASSERT_EQ(j["findings"].size(), 1u);
  EXPECT_EQ(j["findings"][0]["id"], "gpu-lost");
  EXPECT_EQ(j["findings"][0]["gpus"], json::array({1}));
  EXPECT_EQ(j["findings"][0]["alert"]["state"], "firing");
  EXPECT_EQ(j["findings"][0]["alert"]["since"], 100.0);
  EXPECT_EQ(j["evaluated_at"], 105.0);
}

TEST(Api, HistoryWithoutStoreIs503) {
  auto r = api_history(nullptr, {{"metric", "gpu.util_pct"}}, 1000);
  EXPECT_EQ(r.status, 503);
  EXPECT_NE(json::parse(r.body)["error"].get<std::string>().find("--no-db"),
            std::string::npos);
}

TEST(Api, HistoryParsesDurationsAndUnixSeconds) {
  FakeHistory h;
  auto r = api_history(&h,
                       {{"metric", "gpu.mem_used_bytes"},
                        {"gpu", "1"},
                        {"since", "10m"},
                        {"step", "10s"}},
                       10000);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(h.last.metric, "gpu.mem_used_bytes");
  EXPECT_EQ(h.last.gpu, 1);
  EXPECT_EQ(h.last.since, 10000 - 600);
  EXPECT_EQ(h.last.until, 10000);
  EXPECT_EQ(h.last.step, 10);
  r = api_history(&h, {{"metric", "host.load1"}, {"since", "9000"}}, 10000);
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(h.last.since, 9000);
  EXPECT_EQ(h.last.step, 0);
}

TEST(Api, HistoryRejectsBadQueries) {
  FakeHistory h;
  const QueryParams bad[] = {
      {},                     // no metric
      {{"metric", "bogus"}},  // unknown metric
      {{"metric", "gpu.util_pct"}, {"since", "yesterday"}},
      {{"metric", "gpu.util_pct"}, {"step", "-5s"}},
      {{"metric", "gpu.util_pct"}, {"since", "1d"}, {"step", "1ms"}},
      {{"metric", "gpu.util_pct"}, {"since", "100"}, {"until", "50"}},
  };
  for (const auto& p : bad) {
    auto r = api_history(&h, p, 1e9);
    EXPECT_EQ(r.status, 400) << r.body;
    EXPECT_TRUE(json::parse(r.body).contains("error"));
  }
}

TEST(Api, HealthzTurns503WhenSamplesStopComing) {
  auto s = scenario_snapshot();
  EXPECT_EQ(api_healthz(*s, s->sample->t + 1).status, 200);
  EXPECT_EQ(api_healthz(*s, s->sample->t + 600).status, 503);
}

TEST(Api, MetricsHaveThePrometheusContentType) {
  auto s = scenario_snapshot();
  auto r = api_metrics(*s, s->sample->t);
  EXPECT_EQ(r.content_type, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_NE(r.body.find("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\""), std::string::npos);
}

TEST(Api, MetricsPageCacheAnswersWhatApiMetricsRenders) {
  MetricsPageCache cache;
  std::shared_ptr<const Snapshot> s = scenario_snapshot();
  const double t = s->sample->t;
  // The same snapshot scraped later: only the sample ages move.
  for (double now : {t, t + 0.25, t + 7})
    EXPECT_EQ(cache.reply(s, now).body, api_metrics(*s, now).body) << now;
  const std::string host = "{Hostname=\"" + s->header->host.hostname + "\"}";
  EXPECT_NE(cache.reply(s, t + 7).body.find("gpudoctor_sample_age_seconds" +
                                            host + " 7"),
            std::string::npos);
  // A new snapshot (a new sample) is rendered afresh, also when the old one
  // is gone.
  auto next = std::make_shared<Snapshot>(*s);
  auto sample = std::make_shared<Sample>(*s->sample);
  sample->t += 1;
  sample->gpus[0].temp_c = 99;
  next->sample = sample;
  next->collections_total = 4;
  s.reset();
  std::shared_ptr<const Snapshot> n = next;
  EXPECT_EQ(cache.reply(n, t + 2).body, api_metrics(*n, t + 2).body);
  EXPECT_NE(cache.reply(n, t + 2).body.find("gpudoctor_collections_total" +
                                            host + " 4"),
            std::string::npos);
  // No sample yet: no page, as api_metrics.
  auto empty = std::make_shared<Snapshot>();
  EXPECT_EQ(cache.reply(empty, t).body, api_metrics(*empty, t).body);
}

TEST(Api, ListenAddressForms) {
  std::string host;
  int port = 0;
  parse_listen_address("127.0.0.1:9856", host, port);
  EXPECT_EQ(host, "127.0.0.1");
  EXPECT_EQ(port, 9856);
  parse_listen_address(":9000", host, port);
  EXPECT_EQ(host, "0.0.0.0");
  parse_listen_address("[::1]:80", host, port);
  EXPECT_EQ(host, "::1");
  EXPECT_EQ(port, 80);
  EXPECT_THROW(parse_listen_address("localhost:http", host, port),
               std::invalid_argument);
  EXPECT_THROW(parse_listen_address("1.2.3.4:70000", host, port),
               std::invalid_argument);
}

}  // namespace
}  // namespace gd
