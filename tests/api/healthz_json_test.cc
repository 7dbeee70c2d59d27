// GET /healthz: what serve writes reads back field for field; what is not
// a health reply is refused with a reason.
#include "api/healthz_json.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "common/bounded_json.h"

namespace gd::api {
namespace {

HealthReply degraded_node() {
  HealthReply r;
  r.status = "degraded";
  r.collections_total = 99;
  r.sample_age_s = 0.75;
  r.store = HealthStore{true, false, 3, 4096, 2, 1};
  r.degraded = {{"store", std::nullopt, "not writable"}, {"gpu", 5, "lost"}};
  return r;
}

TEST(HealthzJson, ReadsBackWhatServeWrote) {
  const std::string body = healthz_json(degraded_node());
  const HealthReply r = parse_healthz_json(body);
  EXPECT_EQ(r.status, "degraded");
  EXPECT_EQ(r.collections_total, 99u);
  EXPECT_EQ(r.sample_age_s, 0.75);
  ASSERT_TRUE(r.store);
  EXPECT_FALSE(r.store->writable);
  EXPECT_EQ(r.store->pending_bytes, 4096u);
  EXPECT_EQ(r.store->write_errors_total, 3u);
  ASSERT_EQ(r.degraded.size(), 2u);
  EXPECT_FALSE(r.degraded[0].gpu);
  EXPECT_EQ(r.degraded[1].gpu, 5);
  EXPECT_EQ(r.degraded[1].problem, "lost");
  EXPECT_EQ(healthz_json(r), body);
}

// Starting up without history: no sample age, no store; the keys in the
// order serve sent them before this writer.
TEST(HealthzJson, BytesAreAsBefore) {
  HealthReply r;
  r.status = "starting";
  EXPECT_EQ(healthz_json(r),
            R"({"collections_total":0,"degraded":[],"status":"starting"})");
  EXPECT_EQ(healthz_json(degraded_node()),
            R"({"collections_total":99,"degraded":[{"component":"store",)"
            R"("problem":"not writable"},{"component":"gpu","gpu":5,)"
            R"("problem":"lost"}],"sample_age_s":0.75,"status":"degraded",)"
            R"("store":{"dropped_samples_total":2,"pending_bytes":4096,)"
            R"("quarantined_total":1,"usable":true,"writable":false,)"
            R"("write_errors_total":3}})");
}

std::string healthz_refusal(const std::string& body) {
  try {
    parse_healthz_json(body);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(HealthzJson, RefusesWhatIsNotAHealthReply) {
  EXPECT_EQ(healthz_refusal("OK"), "healthz: the reply is not a JSON object");
  EXPECT_EQ(healthz_refusal("{}"), "healthz: no 'status'");
  EXPECT_EQ(healthz_refusal(R"({"status":"ok","store":{"usable":1}})"),
            "healthz.store: 'usable' is not true or false");
  EXPECT_EQ(healthz_refusal(R"({"status":"ok","degraded":[{"gpu":4096}]})"),
            "healthz: 'gpu' is not in range");
  EXPECT_EQ(healthz_refusal(R"({"status":"ok","collections_total":-1})"),
            "healthz: 'collections_total' is not in range");
  EXPECT_THROW(parse_healthz_json(R"({"degraded":)" + std::string(100000, '[')),
               JsonTooDeep);
}

}  // namespace
}  // namespace gd::api
