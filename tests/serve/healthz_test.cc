// /healthz and the store self-metrics: degradation is visible (JSON
// "degraded" list, gpudoctor_store_*), and only a stalled collector turns
// the probe 503.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "serve/api.h"
#include "serve/history.h"

namespace gd {
namespace {

using nlohmann::json;

std::shared_ptr<Snapshot> two_gpu_snapshot(double t) {
  auto s = std::make_shared<Snapshot>();
  auto header = std::make_shared<TraceHeader>();
  auto sample = std::make_shared<Sample>();
  sample->t = t;
  for (int g = 0; g < 2; ++g) {
    GpuInfo info;
    info.index = g;
    header->gpus.push_back(info);
    GpuSample gs;
    gs.index = g;
    sample->gpus.push_back(gs);
    s->gpu_health.push_back({g, true, false, t});
  }
  s->header = header;
  s->sample = sample;
  s->started_at = t - 10;
  s->store = StoreStatus{};
  return s;
}

bool has_problem(const json& j, const std::string& component,
                 const std::string& problem) {
  for (const auto& d : j["degraded"])
    if (d["component"] == component && d["problem"] == problem) return true;
  return false;
}

TEST(Healthz, HealthyIsOkWithNothingDegraded) {
  auto s = two_gpu_snapshot(1000);
  auto r = api_healthz(*s, 1001);
  EXPECT_EQ(r.status, 200);
  auto j = json::parse(r.body);
  EXPECT_EQ(j["status"], "ok");
  EXPECT_TRUE(j["degraded"].empty());
  EXPECT_EQ(j["store"]["writable"], true);
}

TEST(Healthz, UnusableHistoryIsDegradedButNot503) {
  // serve refused the history file (a schema version it does not know):
  // one problem, "not usable", not also "not writable".
  auto s = two_gpu_snapshot(1000);
  s->store->usable = false;
  s->store->writable = false;
  auto r = api_healthz(*s, 1001);
  EXPECT_EQ(r.status, 200);  // a restart would not make it usable
  auto j = json::parse(r.body);
  EXPECT_EQ(j["status"], "degraded");
  EXPECT_TRUE(has_problem(j, "store", "not usable")) << r.body;
  EXPECT_FALSE(has_problem(j, "store", "not writable")) << r.body;
  EXPECT_EQ(j["store"]["usable"], false);
}

TEST(Healthz, FullDiskIsDegradedButNot503) {
  auto s = two_gpu_snapshot(1000);
  s->store->writable = false;
  s->store->write_errors_total = 7;
  s->store->pending_bytes = 123456;
  auto r = api_healthz(*s, 1001);
  EXPECT_EQ(r.status, 200);  // a restart would not free the disk
  auto j = json::parse(r.body);
  EXPECT_EQ(j["status"], "degraded");
  EXPECT_TRUE(has_problem(j, "store", "not writable")) << r.body;
  EXPECT_EQ(j["store"]["pending_bytes"], 123456);

  auto m = api_metrics(*s, 1001).body;
  EXPECT_NE(m.find("\ngpudoctor_store_writable 0\n"), std::string::npos) << m;
  EXPECT_NE(m.find("\ngpudoctor_store_write_errors_total 7\n"),
            std::string::npos);
  EXPECT_NE(m.find("\ngpudoctor_store_pending_bytes 123456\n"),
            std::string::npos);
  EXPECT_NE(m.find("\ngpudoctor_store_dropped_samples_total 0\n"),
            std::string::npos);
  EXPECT_NE(m.find("\ngpudoctor_store_quarantined_blocks_total 0\n"),
            std::string::npos);
}

TEST(Healthz, QuarantinedAndDroppedDataAreDegraded) {
  auto s = two_gpu_snapshot(1000);
  s->store->quarantined_total = 1;
  s->store->dropped_samples_total = 600;
  auto j = json::parse(api_healthz(*s, 1001).body);
  EXPECT_EQ(j["status"], "degraded");
  EXPECT_TRUE(has_problem(j, "store", "corrupt data quarantined"));
  EXPECT_TRUE(has_problem(j, "store", "samples dropped"));
}

TEST(Healthz, StaleAndLostGpusAreListed) {
  auto s = two_gpu_snapshot(1000);
  s->gpu_health[0].success = false;  // read hung past its deadline
  s->gpu_health[1].success = false;
  s->gpu_health[1].lost = true;
  auto r = api_healthz(*s, 1001);
  EXPECT_EQ(r.status, 200);
  auto j = json::parse(r.body);
  EXPECT_EQ(j["status"], "degraded");
  ASSERT_EQ(j["degraded"].size(), 2u) << r.body;
  EXPECT_EQ(j["degraded"][0]["gpu"], 0);
  EXPECT_EQ(j["degraded"][0]["problem"], "stale");
  EXPECT_EQ(j["degraded"][1]["gpu"], 1);
  EXPECT_EQ(j["degraded"][1]["problem"], "lost");
}

TEST(Healthz, StalledCollectorIs503EvenWhenDegraded) {
  auto s = two_gpu_snapshot(1000);
  s->store->writable = false;
  auto r = api_healthz(*s, 1000 + 600);
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(json::parse(r.body)["status"], "stalled");
}

TEST(Healthz, NoStoreMetricsWithoutHistory) {
  auto s = two_gpu_snapshot(1000);
  s->store.reset();
  EXPECT_EQ(api_metrics(*s, 1001).body.find("gpudoctor_store_"),
            std::string::npos);
  EXPECT_FALSE(json::parse(api_healthz(*s, 1001).body).contains("store"));
}

TEST(HistoryApi, ErrorRepliesNameNoFilePath) {
  auto dir = std::filesystem::temp_directory_path() /
             ("gd_healthz_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const std::string path = (dir / "secret-dir" / "history.db").string();
  auto history = open_history(path, 86400);
  auto r = api_history(history.get(), {{"metric", "gpu.bogus"}}, 1e9);
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("unknown metric"), std::string::npos) << r.body;
  EXPECT_EQ(r.body.find("secret-dir"), std::string::npos) << r.body;
  // A good query says how many corrupt blocks it skipped (none here).
  r = api_history(history.get(), {{"metric", "gpu.util_pct"}}, 1e9);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(json::parse(r.body)["skipped_blocks"], 0);
  history.reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gd
