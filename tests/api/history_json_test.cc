// GET /api/v1/history, one metric and several: what serve writes, ps reads
// back; what is not a history reply is refused with a reason.
#include "api/history_json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "common/bounded_json.h"

namespace gd::api {
namespace {

HistoryReply memory_of(bool multi) {
  HistoryReply r;
  r.since = 1732800000;
  r.until = 1732800600.5;
  r.step = 30;
  r.skipped_blocks = 2;
  r.multi = multi;
  HistoryResult used{"process.used_bytes", {}};
  used.series.push_back({1, 4242, {{1732800000, 1 << 20}, {1732800030, 2e9}}});
  used.series.push_back({std::nullopt, std::nullopt, {}});
  r.results.push_back(used);
  if (multi) r.results.push_back({"gpu.util_pct", {{0, std::nullopt, {}}}});
  return r;
}

void expect_same(const HistoryReply& a, const HistoryReply& b) {
  EXPECT_EQ(a.since, b.since);
  EXPECT_EQ(a.until, b.until);
  EXPECT_EQ(a.step, b.step);
  EXPECT_EQ(a.skipped_blocks, b.skipped_blocks);
  EXPECT_EQ(a.multi, b.multi);
  ASSERT_EQ(a.results.size(), b.results.size());
  for (size_t i = 0; i < a.results.size(); ++i) {
    EXPECT_EQ(a.results[i].metric, b.results[i].metric);
    ASSERT_EQ(a.results[i].series.size(), b.results[i].series.size());
    for (size_t k = 0; k < a.results[i].series.size(); ++k) {
      const auto& x = a.results[i].series[k];
      const auto& y = b.results[i].series[k];
      EXPECT_EQ(x.gpu, y.gpu);
      EXPECT_EQ(x.pid, y.pid);
      EXPECT_EQ(x.points, y.points);
    }
  }
}

TEST(HistoryJson, ReadsBackOneMetric) {
  const HistoryReply sent = memory_of(false);
  const std::string body = history_json(sent);
  // The single-metric form as serve has always sent it: numbers in their
  // shortest form (no ".0"), "metric" and "series" at the top.
  EXPECT_EQ(body,
            R"({"since":1732800000,"until":1732800600.5,"step":30,)"
            R"("skipped_blocks":2,"metric":"process.used_bytes","series":[)"
            R"({"gpu":1,"pid":4242,"points":[[1732800000,1048576],)"
            R"([1732800030,2e+09]]},{"gpu":null,"pid":null,)"
            R"("points":[]}]})");
  expect_same(parse_history_json(body), sent);
}

TEST(HistoryJson, ReadsBackSeveralMetrics) {
  const HistoryReply sent = memory_of(true);
  const std::string body = history_json(sent);
  EXPECT_NE(body.find(R"(,"results":[{"metric":"process.used_bytes",)"),
            std::string::npos);
  expect_same(parse_history_json(body), sent);
  EXPECT_EQ(history_json(parse_history_json(body)), body);
}

TEST(HistoryJson, AValueThatWasNotFiniteReadsAsNaN) {
  HistoryReply r = memory_of(false);
  r.results[0].series[0].points[0].second = INFINITY;
  const HistoryReply back = parse_history_json(history_json(r));
  EXPECT_TRUE(std::isnan(back.results[0].series[0].points[0].second));
}

std::string history_refusal(const std::string& body) {
  try {
    parse_history_json(body);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(HistoryJson, RefusesWhatIsNotHistory) {
  EXPECT_EQ(history_refusal("not json"),
            "history: the reply is not a JSON object");
  EXPECT_EQ(history_refusal(R"({"error":"unknown metric"})"),
            "history: no 'series' array");
  EXPECT_EQ(history_refusal(R"({"series":[{"points":[[1]]}]})"),
            "history: a point is not [t, value]");
  EXPECT_EQ(history_refusal(R"({"series":[{"points":[[1,"2"]]}]})"),
            "history: a point is not [t, value]");
  EXPECT_EQ(history_refusal(R"({"series":[{"gpu":1e300,"points":[]}]})"),
            "history: 'gpu' is not a whole number");
  EXPECT_EQ(history_refusal(R"({"series":[{"pid":99999999999,"points":[]}]})"),
            "history: 'pid' is not in range");
  EXPECT_EQ(history_refusal(R"({"results":{}})"),
            "history: 'results' is not an array");
  EXPECT_EQ(history_refusal(R"({"results":[{"metric":7,"series":[]}]})"),
            "history: 'metric' is not a string");
  std::string many = R"({"series":[)";
  for (int i = 0; i < 4097; ++i)
    many += std::string(i ? "," : "") + R"({"points":[]})";
  EXPECT_EQ(history_refusal(many + "]}"), "history: more than 4096 series");
  EXPECT_THROW(parse_history_json(R"({"series":)" + std::string(100000, '[')),
               JsonTooDeep);
}

}  // namespace
}  // namespace gd::api
