// GET /api/v1/usage: what serve writes reads back field for field; a reply
// that is not a usage report (wrong types, series that do not fit the
// buckets, too many groups) is refused with a one-line reason.
#include "api/usage_json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace gd::api {
namespace {

UsageReply two_jobs() {
  UsageReply r;
  r.by = "job";
  r.since = 1732790000;
  r.until = 1732793600;
  r.start = 1732790001;
  r.end = 1732793599;
  r.samples = 3599;
  r.bucket_s = 1800;
  r.buckets = {1732790000, 1732791800};
  r.node = {2, 2.0, 1.5, 1.2, 0.5, 0, 1.1, 0.9, 0.2};
  UsageGroup a;
  a.key = "pid:8000@1732262340";
  a.label = "<img src=x onerror=alert(1)> (pid 8000)";
  a.gpus = {0, 1};
  a.first = 1732790001;
  a.last = 1732793599;
  a.gpu_hours_held = 1.25;
  a.busy_gpu_hours = 1.0;
  a.idle_held_gpu_hours = 0.1;
  a.energy_kwh = 0.75;
  a.split = "sm+memory";
  a.energy_counter_kwh = 0.7;
  a.energy_power_kwh = 0.05;
  a.held_series = {0.5, 0.75};
  a.energy_series = {0.25, 0.5};
  a.waste = {{"input-bound", "warning", 1800, 0.5}};
  r.groups.push_back(a);
  UsageGroup other;
  other.key = other.label = "other";
  other.other = true;
  other.groups = 7;
  other.held_series = {0.25, 0};
  other.energy_series = {0.1, 0};
  other.gpu_hours_held = 0.25;
  other.energy_kwh = 0.1;
  other.split = "-";
  r.groups.push_back(other);
  r.groups_total = 8;
  r.computed_at = 1732793600.5;
  return r;
}

TEST(UsageJson, ReadsBackWhatServeWrote) {
  const std::string body = usage_json(two_jobs());
  EXPECT_TRUE(nlohmann::json::accept(body)) << body;
  const UsageReply r = parse_usage_json(body);
  EXPECT_EQ(r.by, "job");
  EXPECT_EQ(r.samples, 3599u);
  EXPECT_EQ(r.buckets, two_jobs().buckets);
  EXPECT_EQ(r.node.gpus, 2);
  EXPECT_DOUBLE_EQ(r.node.idle_energy_kwh, 0.2);
  ASSERT_EQ(r.groups.size(), 2u);
  const UsageGroup& a = r.groups[0];
  EXPECT_EQ(a.label, "<img src=x onerror=alert(1)> (pid 8000)");
  EXPECT_EQ(a.gpus, (std::vector<int>{0, 1}));
  EXPECT_DOUBLE_EQ(a.gpu_hours_held, 1.25);
  EXPECT_EQ(a.split, "sm+memory");
  EXPECT_DOUBLE_EQ(a.energy_counter_kwh, 0.7);
  EXPECT_EQ(a.held_series, (std::vector<double>{0.5, 0.75}));
  ASSERT_EQ(a.waste.size(), 1u);
  EXPECT_EQ(a.waste[0].id, "input-bound");
  EXPECT_DOUBLE_EQ(a.waste[0].share, 0.5);
  EXPECT_TRUE(r.groups[1].other);
  EXPECT_EQ(r.groups[1].groups, 7u);
  EXPECT_EQ(r.groups_total, 8u);
  EXPECT_TRUE(r.findings);
}

TEST(UsageJson, NamesThatAreNotUtf8StayValidJson) {
  UsageReply r = two_jobs();
  r.groups[0].label = std::string("py\xff\xfe\"\n", 6);
  const std::string body = usage_json(r);
  EXPECT_TRUE(nlohmann::json::accept(body)) << body;
  EXPECT_EQ(body.find('\n'), std::string::npos);
}

void expect_refused(const std::string& body, const std::string& why) {
  try {
    (void)parse_usage_json(body);
    ADD_FAILURE() << "accepted: " << body;
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
}

TEST(UsageJson, RefusesWhatIsNotAUsageReport) {
  using nlohmann::json;
  const json good = json::parse(usage_json(two_jobs()));
  expect_refused("[]", "not a JSON object");
  json j = good;
  j["by"] = "gpu";
  expect_refused(j.dump(), "'by'");
  j = good;
  j["groups"][0]["series"]["gpu_hours_held"] = {1.0};
  expect_refused(j.dump(), "one value per bucket");
  j = good;
  j["groups"][0]["series"]["energy_kwh"] = {"a", "b"};
  expect_refused(j.dump(), "not a number");
  j = good;
  j["groups"][0]["gpus"] = {2048};
  expect_refused(j.dump(), "GPU index");
  j = good;
  j["groups"] = json::array();
  for (int i = 0; i <= kUsageMaxTop + 1; ++i)
    j["groups"].push_back(good["groups"][1]);
  expect_refused(j.dump(), "too many");
  j = good;
  j["buckets"] = json::array();
  for (int i = 0; i <= kUsageMaxBuckets; ++i) j["buckets"].push_back(i);
  expect_refused(j.dump(), "too many");
  j = good;
  j["groups"][0]["waste"] = json::array();
  for (size_t i = 0; i <= kUsageMaxFindings; ++i)
    j["groups"][0]["waste"].push_back({{"id", "x"}});
  expect_refused(j.dump(), "too many");
  j = good;
  j.erase("node");
  expect_refused(j.dump(), "'node'");
}

}  // namespace
}  // namespace gd::api
