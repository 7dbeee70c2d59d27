// GET /api/v1/usage on a made-up history: its parameters bounded with a
// one-line 400, its totals what the accounting oracle says (the same engine
// as `report --db`), its buckets adding up to the totals, its groups past
// the top N added up in "other", and its replies cached for a while.
#include "serve/usage.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "accounting/scenario.h"
#include "api/usage_json.h"

namespace gd {
namespace {

using accounting::testing::Expected;
using accounting::testing::kGiB;
using accounting::testing::Scenario;
using nlohmann::json;

// serve's history as a vector: scan() hands over [since, until].
class VectorHistory : public History {
 public:
  explicit VectorHistory(const Scenario& sc) : header_(sc.header()) {
    sc.run([this](const Sample& s) { samples_.push_back(s); }, expected);
  }
  void set_header(const TraceHeader&) override {}
  void append(const Sample&) override {}
  void flush() override {}
  void maintain(double) override {}
  std::string query_json(const HistoryQuery&) const override { return "{}"; }
  TraceHeader header() const override { return header_; }
  size_t scan(double since, double until,
              const std::function<bool(Sample&)>& fn,
              ReadReport*) const override {
    ++scans;
    size_t n = 0;
    for (const Sample& s : samples_) {
      if (s.t < since || s.t > until) continue;
      ++n;
      Sample copy = s;  // the scan's own: fn may move it away
      if (!fn(copy)) break;
    }
    return n;
  }
  Health health() const override {
    Health h;
    h.status.usable = true;
    return h;
  }
  Expected expected;
  mutable int scans = 0;

 private:
  TraceHeader header_;
  std::vector<Sample> samples_;
};

// t 1000..1100: A and B share GPU 0 (by SM%), C holds GPU 1 until 1050,
// GPU 2 is never held.
Scenario three_jobs() {
  Scenario sc;
  sc.gpus = {{.watts = 300}, {.watts = 100}, {.watts = 50}};
  sc.jobs = {
      {.key = "slurm:1",
       .pid = 101,
       .cgroup = "/slurm/job_1/step_0",
       .gpu = 0,
       .from = 1000,
       .to = 1101,
       .mem = 20 * kGiB,
       .sm = 30.0},
      {.key = "slurm:2",
       .pid = 102,
       .cgroup = "/slurm/job_2/step_0",
       .gpu = 0,
       .from = 1000,
       .to = 1101,
       .mem = 20 * kGiB,
       .sm = 10.0},
      {.key = "slurm:3",
       .pid = 103,
       .cgroup = "/slurm/job_3/step_0",
       .gpu = 1,
       .from = 1000,
       .to = 1050,
       .mem = 40 * kGiB,
       .sm = 90.0},
  };
  return sc;
}

QueryParams params(
    std::initializer_list<std::pair<std::string, std::string>> l) {
  return QueryParams(l.begin(), l.end());
}

double sum(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

TEST(Usage, BadParametersAre400WithOneLine) {
  VectorHistory h(three_jobs());
  const double now = 2000;
  for (const auto& q :
       {params({{"buckets", "0"}}), params({{"buckets", "241"}}),
        params({{"buckets", "x"}}), params({{"top", "21"}}),
        params({{"top", "-1"}}), params({{"by", "gpu"}}),
        params({{"by", "<b>"}}), params({{"since", "1h"}, {"since", "2h"}}),
        params({{"since", "1000"}, {"until", "900"}}),
        params({{"since", "8d"}}), params({{"since", "yesterday"}})}) {
    const ApiReply r = api_usage(&h, q, now);
    EXPECT_EQ(r.status, 400) << r.body;
    EXPECT_EQ(r.body.find('\n'), std::string::npos) << r.body;
    EXPECT_TRUE(json::parse(r.body).contains("error")) << r.body;
  }
  EXPECT_EQ(h.scans, 0);
  EXPECT_EQ(api_usage(nullptr, {}, now).status, 503);
}

TEST(Usage, DefaultsAre24hByJob48Buckets8Groups) {
  const UsageQuery q = parse_usage_query({}, 100000);
  EXPECT_EQ(q.since, 100000 - 86400);
  EXPECT_EQ(q.until, 100000);
  EXPECT_EQ(q.by, accounting::Dimension::kJob);
  EXPECT_EQ(q.buckets, 48);
  EXPECT_EQ(q.top, 8);
}

TEST(Usage, TotalsMatchTheOracleAndBucketsAddUp) {
  VectorHistory h(three_jobs());
  const ApiReply r = api_usage(
      &h, params({{"since", "1000"}, {"until", "1100"}, {"buckets", "4"}}),
      5000);
  ASSERT_EQ(r.status, 200) << r.body;
  const api::UsageReply u = api::parse_usage_json(r.body);
  EXPECT_EQ(u.by, "job");
  EXPECT_EQ(u.samples, 101u);
  ASSERT_EQ(u.buckets.size(), 4u);
  EXPECT_DOUBLE_EQ(u.bucket_s, 25);
  EXPECT_DOUBLE_EQ(u.buckets[1], 1025);
  ASSERT_EQ(u.groups.size(), 3u);
  EXPECT_EQ(u.groups_total, 3u);
  for (const auto& g : u.groups) {
    SCOPED_TRACE(g.key);
    EXPECT_FALSE(g.other);
    EXPECT_NEAR(g.gpu_hours_held, h.expected.job_held_s[g.key] / 3600, 1e-9);
    EXPECT_NEAR(g.energy_kwh, h.expected.job_energy_j[g.key] / 3.6e6, 1e-12);
    EXPECT_NEAR(sum(g.held_series), g.gpu_hours_held, 1e-12);
    EXPECT_NEAR(sum(g.energy_series), g.energy_kwh, 1e-12);
  }
  // Sorted by held: C (a whole GPU for 49 s) after A and B (half of one
  // each for 100 s); C's last two buckets are empty.
  EXPECT_EQ(u.groups[2].key, "slurm:3");
  EXPECT_GT(u.groups[2].held_series[1], 0);
  EXPECT_EQ(u.groups[2].held_series[2], 0);
  EXPECT_EQ(u.groups[2].held_series[3], 0);
  EXPECT_EQ(u.groups[0].split, "sm");
  // GPU 2 and GPU 1's second half: idle energy; the node closes.
  EXPECT_EQ(u.node.gpus, 3);
  EXPECT_NEAR(u.node.gpu_hours_available, 3 * 100 / 3600.0, 1e-9);
  EXPECT_NEAR(
      u.node.idle_energy_kwh,
      (h.expected.idle_energy_j[1] + h.expected.idle_energy_j[2]) / 3.6e6,
      1e-12);
  EXPECT_TRUE(u.findings);
}

TEST(Usage, GroupsPastTheTopAreAddedUpInOther) {
  VectorHistory h(three_jobs());
  const ApiReply r = api_usage(&h,
                               params({{"since", "1000"},
                                       {"until", "1100"},
                                       {"top", "1"},
                                       {"buckets", "2"}}),
                               5000);
  ASSERT_EQ(r.status, 200) << r.body;
  const api::UsageReply u = api::parse_usage_json(r.body);
  ASSERT_EQ(u.groups.size(), 2u);
  const api::UsageGroup& other = u.groups[1];
  EXPECT_TRUE(other.other);
  EXPECT_EQ(other.key, "other");
  EXPECT_EQ(other.groups, 2u);
  EXPECT_EQ(u.groups_total, 3u);
  const double all =
      (h.expected.job_held_s["slurm:1"] + h.expected.job_held_s["slurm:2"] +
       h.expected.job_held_s["slurm:3"]) /
      3600;
  EXPECT_NEAR(u.groups[0].gpu_hours_held + other.gpu_hours_held, all, 1e-9);
  EXPECT_NEAR(sum(other.held_series), other.gpu_hours_held, 1e-12);
  EXPECT_EQ(other.gpus, (std::vector<int>{0, 1}));
}

TEST(Usage, ByUserAndAnEmptyWindow) {
  VectorHistory h(three_jobs());
  ApiReply r = api_usage(
      &h, params({{"since", "1000"}, {"until", "1100"}, {"by", "user"}}), 5000);
  ASSERT_EQ(r.status, 200) << r.body;
  api::UsageReply u = api::parse_usage_json(r.body);
  ASSERT_EQ(u.groups.size(), 1u);
  EXPECT_EQ(u.groups[0].label, "alice");
  r = api_usage(&h, params({{"since", "3000"}, {"until", "3100"}}), 5000);
  ASSERT_EQ(r.status, 200) << r.body;
  u = api::parse_usage_json(r.body);
  EXPECT_EQ(u.samples, 0u);
  EXPECT_TRUE(u.groups.empty());
  EXPECT_EQ(u.buckets.size(), 48u);
}

TEST(Usage, CacheAnswersTheSameQueryWithoutAScanForAWhile) {
  VectorHistory h(three_jobs());
  UsageCache cache;
  const QueryParams q = params({{"since", "1000"}, {"until", "1100"}});
  const ApiReply a = cache.reply(&h, q, 5000);
  const ApiReply b = cache.reply(&h, q, 5000 + UsageCache::kTtlS / 2);
  EXPECT_EQ(a.body, b.body);
  EXPECT_EQ(h.scans, 1);
  cache.reply(&h, q, 5000 + UsageCache::kTtlS + 1);
  EXPECT_EQ(h.scans, 2);
  cache.reply(&h, params({{"since", "1000"}, {"until", "1100"}, {"top", "2"}}),
              5000);
  EXPECT_EQ(h.scans, 3);
  // Errors are not kept.
  EXPECT_EQ(cache.reply(&h, params({{"top", "0"}}), 5000).status, 400);
}

}  // namespace
}  // namespace gd
