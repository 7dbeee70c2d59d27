// GET /api/v1/alerts: the alert history written by serve reads back field
// for field; what is not an alert history is refused with a reason.
#include "api/alerts_json.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "common/bounded_json.h"

namespace gd::api {
namespace {

AlertsReply fired_and_cleared() {
  AlertsReply r{1732790000, 1732800000, {}};
  AlertEntry a;
  a.id = "xid-79";
  a.severity = "critical";
  a.title = "GPU 1 fell off the bus";
  a.evidence = "Xid 79";
  a.action = "drain the node";
  a.gpus = {1, 3};
  a.started_at = 1732795000;
  a.fired_at = 1732795000.5;
  a.resolved_at = 1732799000;
  a.ended = "resolved";
  r.alerts.push_back(a);
  AlertEntry b;
  b.id = "thermal";
  b.severity = "warning";
  b.started_at = 1732799500;
  b.fired_at = 1732799560;
  r.alerts.push_back(b);  // still firing: resolved_at and ended are null
  return r;
}

TEST(AlertsJson, ReadsBackWhatServeWrote) {
  const std::string body = alerts_json(fired_and_cleared());
  EXPECT_NE(body.find(R"("ended":null,)"), std::string::npos) << body;
  EXPECT_NE(body.find(R"("resolved_at":null,)"), std::string::npos) << body;
  const AlertsReply r = parse_alerts_json(body);
  EXPECT_EQ(r.since, 1732790000);
  EXPECT_EQ(r.until, 1732800000);
  ASSERT_EQ(r.alerts.size(), 2u);
  EXPECT_EQ(r.alerts[0].id, "xid-79");
  EXPECT_EQ(r.alerts[0].gpus, (std::vector<int>{1, 3}));
  EXPECT_EQ(r.alerts[0].fired_at, 1732795000.5);
  EXPECT_EQ(r.alerts[0].resolved_at, 1732799000);
  EXPECT_EQ(r.alerts[0].ended, "resolved");
  EXPECT_FALSE(r.alerts[1].resolved_at);
  EXPECT_EQ(r.alerts[1].ended, "");
  EXPECT_EQ(alerts_json(r), body);
}

// The keys in the order serve sent them before this writer (nlohmann's).
TEST(AlertsJson, BytesAreAsBefore) {
  AlertsReply r{1, 2, {AlertEntry{}}};
  EXPECT_EQ(alerts_json(r),
            R"({"alerts":[{"action":"","ended":null,"evidence":"",)"
            R"("fired_at":0.0,"gpus":[],"id":"","resolved_at":null,)"
            R"("severity":"","started_at":0.0,"title":""}],"since":1.0,)"
            R"("until":2.0})");
}

std::string alerts_refusal(const std::string& body) {
  try {
    parse_alerts_json(body);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(AlertsJson, RefusesWhatIsNotAnAlertHistory) {
  EXPECT_EQ(alerts_refusal("\"alerts\""),
            "alerts: the reply is not a JSON object");
  EXPECT_EQ(alerts_refusal(R"({"error":"alert history is off"})"),
            "alerts: no 'alerts' array");
  EXPECT_EQ(alerts_refusal(R"({"alerts":[{"gpus":[1,-2]}]})"),
            "alerts: a GPU index is not 0..1023");
  EXPECT_EQ(alerts_refusal(R"({"alerts":[{"fired_at":"now"}]})"),
            "alerts: 'fired_at' is not a number");
  EXPECT_EQ(alerts_refusal(R"({"alerts":[{"title":["a"]}]})"),
            "alerts: 'title' is not a string");
  EXPECT_THROW(parse_alerts_json(R"({"alerts":)" + std::string(100000, '[')),
               JsonTooDeep);
  const AlertsReply long_text = parse_alerts_json(
      R"({"alerts":[{"evidence":")" + std::string(100000, 'e') + R"("}]})");
  EXPECT_EQ(long_text.alerts[0].evidence.size(), 64u * 1024);
}

}  // namespace
}  // namespace gd::api
