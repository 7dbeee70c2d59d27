// GET /api/v1/findings: what serve writes, top --connect reads back; a
// reply that is not findings is refused, odd entries are bounded.
#include "api/findings_json.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "common/bounded_json.h"

namespace gd::api {
namespace {

FindingsReply two_alerts() {
  FindingsReply r;
  AlertedFinding a;
  a.finding.id = "xid-79";
  a.finding.severity = "critical";
  a.finding.title = "GPU 1 fell off the bus";
  a.finding.evidence = "Xid 79 at 10:00:01 \"quoted\"\n";
  a.finding.action = "drain the node";
  a.finding.gpus = {1};
  a.finding.pids = {4242, 4243};
  a.finding.start = 1732800000.5;
  a.finding.end = 1732800060;
  a.alert = {"firing", 1732800000.5, 0, 1732800001.0};
  r.findings.push_back(a);
  AlertedFinding b;
  b.finding.id = "thermal";
  b.finding.severity = "warning";
  b.finding.title = "hot";
  b.alert = {"pending", 1732800050, 60, std::nullopt};
  r.findings.push_back(b);
  r.window.start = 1732799940;
  r.window.end = 1732800060;
  r.window.samples = 121;
  r.evaluated_at = 1732800060.25;
  r.not_judged = {
      {"xid-error", "needs the kernel log's Xid lines; not read (--kmsg none)"},
      {"memory-leak", "needs 5 min; the window has \"14 s\""}};
  return r;
}

TEST(FindingsJson, ReadsBackWhatServeWrote) {
  const std::string body = findings_json(two_alerts());
  const FindingsReply r = parse_findings_json(body);
  ASSERT_EQ(r.findings.size(), 2u);
  const Finding& f = r.findings[0].finding;
  EXPECT_EQ(f.id, "xid-79");
  EXPECT_EQ(f.severity, "critical");
  EXPECT_EQ(f.evidence, "Xid 79 at 10:00:01 \"quoted\"\n");
  EXPECT_EQ(f.gpus, std::vector<int>{1});
  EXPECT_EQ(f.pids, (std::vector<uint32_t>{4242, 4243}));
  EXPECT_EQ(f.start, 1732800000.5);
  EXPECT_EQ(f.end, 1732800060);
  EXPECT_EQ(r.findings[0].alert.state, "firing");
  EXPECT_EQ(r.findings[0].alert.firing_since, 1732800001.0);
  EXPECT_EQ(r.findings[1].alert.state, "pending");
  EXPECT_EQ(r.findings[1].alert.for_s, 60);
  EXPECT_FALSE(r.findings[1].alert.firing_since);
  EXPECT_EQ(r.window.samples, 121u);
  EXPECT_EQ(r.window.start, 1732799940);
  EXPECT_EQ(r.evaluated_at, 1732800060.25);
  ASSERT_EQ(r.not_judged.size(), 2u);
  EXPECT_EQ(r.not_judged[0].id, "xid-error");
  EXPECT_EQ(r.not_judged[1].reason, "needs 5 min; the window has \"14 s\"");
  EXPECT_EQ(findings_json(r), body);  // and written again, the same bytes
}

// docs/findings.md's field names, in the order serve has always sent them.
TEST(FindingsJson, BytesAreAsBefore) {
  FindingsReply r;
  AlertedFinding a;
  a.finding.id = "x";
  a.finding.severity = "info";
  a.alert = {"pending", 2, 300, std::nullopt};
  r.findings.push_back(a);
  EXPECT_EQ(findings_json(r),
            R"({"evaluated_at":null,"findings":[{"action":"","alert":)"
            R"({"for_s":300.0,"since":2.0,"state":"pending"},"end":0.0,)"
            R"("evidence":"","gpus":[],"id":"x","pids":[],"severity":"info",)"
            R"("start":0.0,"title":""}],"not_judged":[],)"
            R"("window":{"end":0.0,"samples":0,)"
            R"("start":0.0}})");
}

std::string findings_refusal(const std::string& body) {
  try {
    parse_findings_json(body);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(FindingsJson, RefusesWhatIsNotFindings) {
  EXPECT_EQ(findings_refusal("null"),
            "findings: the reply is not a JSON object");
  EXPECT_EQ(findings_refusal(R"({"findings":{}})"),
            "findings: no 'findings' array");
  EXPECT_EQ(findings_refusal(R"({"findings":[7]})"),
            "findings: an item is not an object");
  EXPECT_EQ(findings_refusal(R"({"findings":[{"severity":"fatal"}]})"),
            "findings: unknown severity");
  EXPECT_EQ(
      findings_refusal(R"({"findings":[{"severity":"info","start":"10"}]})"),
      "findings: 'start' is not a number");
  EXPECT_EQ(
      findings_refusal(R"({"findings":[{"severity":"info","alert":[]}]})"),
      "findings: 'alert' is not an object");
  EXPECT_EQ(findings_refusal(R"({"findings":[],"not_judged":[1]})"),
            "findings: a not_judged entry is not an object");
  EXPECT_EQ(findings_refusal(R"({"findings":[],"not_judged":[{"id":7}]})"),
            "findings.not_judged: 'id' is not a string");
  std::string many = R"({"findings":[)";
  for (int i = 0; i < 1001; ++i)
    many += std::string(i ? "," : "") + R"({"severity":"info"})";
  EXPECT_EQ(findings_refusal(many + "]}"), "findings: more than 1000 findings");
  EXPECT_THROW(
      parse_findings_json(R"({"findings":)" + std::string(100000, '[')),
      JsonTooDeep);
}

TEST(FindingsJson, OddEntriesAreLeftOutAndTextsCut) {
  const FindingsReply r = parse_findings_json(
      R"({"findings":[{"severity":"info","gpus":[-1,2,1e9,"3",4096],)"
      R"("pids":[-5,7,5000000000],"title":")" +
      std::string(100000, 't') + R"("}]})");
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].finding.gpus, std::vector<int>{2});
  EXPECT_EQ(r.findings[0].finding.pids, std::vector<uint32_t>{7});
  EXPECT_EQ(r.findings[0].finding.title.size(), 64u * 1024);
}

}  // namespace
}  // namespace gd::api
