#include "serve/alerting.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace gd {
namespace {

Finding finding(std::string id, std::string severity, std::vector<int> gpus) {
  Finding f;
  f.id = std::move(id);
  f.severity = std::move(severity);
  f.gpus = std::move(gpus);
  f.title = "title of " + f.id;
  f.evidence = "numbers";
  f.action = "do this";
  return f;
}

TEST(AlertTracker, WarningIsPendingUntilItHeldForItsDuration) {
  AlertPolicy policy;  // warning: 60 s
  AlertTracker t;
  auto f = finding("thermal-throttling", "warning", {2});
  EXPECT_TRUE(t.update({f}, 1000, policy).empty());
  ASSERT_EQ(t.active().size(), 1u);
  EXPECT_EQ(t.active()[0].state, "pending");
  EXPECT_TRUE(t.update({f}, 1059, policy).empty());
  auto changed = t.update({f}, 1060, policy);
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(changed[0].state, "firing");
  EXPECT_EQ(changed[0].since, 1000);
  EXPECT_EQ(changed[0].fired_at, 1060);
  EXPECT_TRUE(t.update({f}, 1065, policy).empty());  // fires once
  EXPECT_EQ(t.firing().size(), 1u);
}

TEST(AlertTracker, CriticalFiresAtOnceAndResolvesWhenGone) {
  AlertPolicy policy;
  AlertTracker t;
  auto changed = t.update({finding("gpu-lost", "critical", {1})}, 10, policy);
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(changed[0].state, "firing");
  changed = t.update({}, 15, policy);
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(changed[0].state, "resolved");
  EXPECT_EQ(changed[0].resolved_at, 15);
  EXPECT_TRUE(t.active().empty());
}

TEST(AlertTracker, PendingThatDisappearsNeverFiresAndStartsOverNextTime) {
  AlertPolicy policy;
  AlertTracker t;
  auto f = finding("host-swapping", "warning", {});
  t.update({f}, 0, policy);
  EXPECT_TRUE(t.update({}, 30, policy).empty());  // no resolve for pending
  t.update({f}, 40, policy);
  EXPECT_TRUE(t.update({f}, 90, policy).empty());  // 50 s since 40
  EXPECT_EQ(t.update({f}, 100, policy).size(), 1u);
}

TEST(AlertTracker, OneAlertPerIdAndGpuSet) {
  AlertPolicy policy;
  AlertTracker t;
  t.update({finding("xid-error", "critical", {0}),
            finding("xid-error", "critical", {0}),
            finding("xid-error", "critical", {1})},
           0, policy);
  EXPECT_EQ(t.active().size(), 2u);
}

TEST(AlertPolicy, ConfigOverridesPerSeverityAndPerId) {
  Config c = Config::from_toml_string(
      "[alerting]\nfor_warning_s = 5\nwindow_s = 30\n"
      "[alerting.for_s]\nthermal-throttling = 120\n",
      "serve.toml");
  AlertPolicy p = AlertPolicy::from_config(c, c.unused_keys());
  EXPECT_EQ(p.window_s, 30);
  EXPECT_EQ(p.for_s(finding("host-swapping", "warning", {})), 5);
  EXPECT_EQ(p.for_s(finding("thermal-throttling", "warning", {0})), 120);
  EXPECT_EQ(p.for_s(finding("gpu-lost", "critical", {0})), 0);
  EXPECT_TRUE(c.unused_keys().empty());  // all alerting keys were read
}

TEST(AlertPolicy, RejectsNonPositiveWindow) {
  Config c = Config::from_toml_string("[alerting]\nwindow_s = 0\n", "x.toml");
  EXPECT_THROW(AlertPolicy::from_config(c, c.unused_keys()),
               std::runtime_error);
}

TEST(AlertmanagerPayload, HasLabelsAnnotationsAndTimes) {
  AlertPolicy policy;
  AlertTracker t;
  t.update({finding("gpu-lost", "critical", {1})}, 1732262400.0, policy);
  auto firing = t.firing();
  auto body = nlohmann::json::parse(
      alertmanager_payload(firing, 1732262400.0, policy, "node07:9856",
                           "http://node07:9856/api/v1/findings"));
  ASSERT_TRUE(body.is_array());
  ASSERT_EQ(body.size(), 1u);
  const auto& a = body[0];
  EXPECT_EQ(a["labels"]["alertname"], "gpu-lost");
  EXPECT_EQ(a["labels"]["severity"], "critical");
  EXPECT_EQ(a["labels"]["gpu"], "1");
  EXPECT_EQ(a["labels"]["instance"], "node07:9856");
  EXPECT_EQ(a["annotations"]["summary"], "title of gpu-lost");
  EXPECT_EQ(a["annotations"]["description"], "numbers\ndo this");
  EXPECT_EQ(a["startsAt"], "2024-11-22T08:00:00.000Z");
  // Firing: valid for 4 resend intervals, so a dead daemon's alerts expire.
  EXPECT_EQ(a["endsAt"], "2024-11-22T08:04:00.000Z");
  EXPECT_EQ(a["generatorURL"], "http://node07:9856/api/v1/findings");

  auto resolved = t.update({}, 1732262430.5, policy);
  body = nlohmann::json::parse(
      alertmanager_payload(resolved, 1732262430.5, policy, "n:1", "u"));
  EXPECT_EQ(body[0]["endsAt"], "2024-11-22T08:00:30.500Z");
}

TEST(AlertmanagerPayload, HostWideFindingHasNoGpuLabel) {
  AlertPolicy policy;
  policy.for_warning_s = 0;
  AlertTracker t;
  t.update({finding("host-swapping", "warning", {})}, 0, policy);
  auto body = nlohmann::json::parse(
      alertmanager_payload(t.firing(), 0, policy, "n:1", "u"));
  EXPECT_FALSE(body[0]["labels"].contains("gpu"));
}

}  // namespace
}  // namespace gd
