// GET /api/v1/status: what serve writes, top --connect reads back field for
// field; a reply that is not a status is refused with a reason.
#include "api/status_json.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "common/bounded_json.h"
#include "trace/trace_io.h"

namespace gd::api {
namespace {

TraceHeader header_of_two_gpus() {
  TraceHeader h;
  h.host.hostname = "node-7";
  h.host.pid_namespace = "host";
  for (int i = 0; i < 2; ++i) {
    GpuInfo g;
    g.index = i;
    g.uuid = "GPU-" + std::to_string(i);
    g.name = "NVIDIA H100 80GB HBM3";
    h.gpus.push_back(g);
  }
  return h;
}

Sample sample_at(double t) {
  Sample s;
  s.t = t;
  GpuSample g;
  g.index = 1;
  g.util_pct = 97.5;
  g.temp_c = 71;
  g.processes = std::vector<GpuProcess>{};
  GpuProcess p;
  p.pid = 4242;
  p.used_bytes = 1ull << 34;
  g.processes->push_back(p);
  s.gpus.push_back(g);
  return s;
}

StatusCollect collect_of_two_gpus() {
  StatusCollect c;
  c.collections_total = 12345;
  c.collect_duration_s = 0.0125;
  c.interval_s = 2;
  c.started_at = 1732800000.25;
  c.version = "0.1.0";
  c.remote_kill = true;
  c.sample_age_s = 0.5;
  c.gpus = {{0, true, false, 1732800100.0}, {1, false, true, std::nullopt}};
  return c;
}

TEST(StatusJson, ReadsBackWhatServeWrote) {
  const TraceHeader h = header_of_two_gpus();
  const Sample s = sample_at(1732800100.5);
  std::string body;
  append_status_json(body, h, &s, collect_of_two_gpus());
  const StatusReply r = parse_status_json(body);
  EXPECT_EQ(r.header.host.hostname, "node-7");
  ASSERT_EQ(r.header.gpus.size(), 2u);
  EXPECT_EQ(r.header.gpus[1].uuid, "GPU-1");
  ASSERT_TRUE(r.sample);
  EXPECT_EQ(r.sample->t, 1732800100.5);
  ASSERT_EQ(r.sample->gpus.size(), 1u);
  EXPECT_EQ(r.sample->gpus[0].util_pct, 97.5);
  ASSERT_TRUE(r.sample->gpus[0].processes);
  EXPECT_EQ((*r.sample->gpus[0].processes)[0].used_bytes, 1ull << 34);
  const StatusCollect& c = r.collect;
  EXPECT_EQ(c.collections_total, 12345u);
  EXPECT_EQ(c.collect_duration_s, 0.0125);
  EXPECT_EQ(c.interval_s, 2);
  EXPECT_EQ(c.started_at, 1732800000.25);
  EXPECT_EQ(c.version, "0.1.0");
  EXPECT_TRUE(c.remote_kill);
  EXPECT_EQ(c.sample_age_s, 0.5);
  ASSERT_EQ(c.gpus.size(), 2u);
  EXPECT_TRUE(c.gpus[0].success);
  EXPECT_EQ(c.gpus[0].last_success_t, 1732800100.0);
  EXPECT_EQ(c.gpus[1].index, 1);
  EXPECT_TRUE(c.gpus[1].lost);
  EXPECT_FALSE(c.gpus[1].last_success_t);
  // Written again, the reply is the same bytes.
  std::string again;
  append_status_json(again, r.header, &*r.sample, r.collect);
  EXPECT_EQ(again, body);
}

TEST(StatusJson, BeforeTheFirstSampleTheSampleIsNull) {
  std::string body;
  StatusCollect c;
  append_status_json(body, header_of_two_gpus(), nullptr, c);
  EXPECT_NE(body.find("\"sample\":null"), std::string::npos);
  EXPECT_NE(body.find("\"sample_age_s\":null"), std::string::npos);
  const StatusReply r = parse_status_json(body);
  EXPECT_FALSE(r.sample);
  EXPECT_FALSE(r.collect.sample_age_s);
}

// The collect object's keys in the order (and number form) serve sent them
// before it had this writer: nlohmann's sorted keys.
TEST(StatusJson, CollectBytesAreAsBefore) {
  std::string body;
  StatusCollect c;
  c.collections_total = 3;
  c.interval_s = 1;
  c.version = "v";
  c.gpus = {{0, true, false, 5.0}};
  append_status_json(body, header_of_two_gpus(), nullptr, c);
  EXPECT_NE(
      body.find(R"("collect":{"collect_duration_s":0.0,"collections_total":3,)"
                R"("gpus":[{"index":0,"last_success_t":5.0,"lost":false,)"
                R"("success":true}],"interval_s":1.0,"remote_kill":false,)"
                R"("sample_age_s":null,"started_at":0.0,"version":"v"}})"),
      std::string::npos)
      << body;
}

// A status whose header is a real one, with `rest` after it.
std::string status_with(const std::string& rest) {
  std::string body = "{\"header\":";
  append_header_json(body, header_of_two_gpus());
  return body + rest + "}";
}

std::string status_refusal(const std::string& body) {
  try {
    parse_status_json(body);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(StatusJson, RefusesWhatIsNotAStatus) {
  EXPECT_EQ(status_refusal("<html>"), "status: the reply is not a JSON object");
  EXPECT_EQ(status_refusal("[1,2]"), "status: the reply is not a JSON object");
  EXPECT_EQ(status_refusal(R"({"error":"unauthorized"})"),
            "status: no 'header' object");
  EXPECT_EQ(status_refusal(R"({"header":{}})"),
            "status.header: not a gpudoctor trace header (missing "
            "\"format\": \"gpudoctor-trace\")");
  EXPECT_EQ(status_refusal(status_with(R"(,"sample":7)")),
            "status: 'sample' is not an object");
  EXPECT_EQ(status_refusal(status_with(R"(,"collect":{"remote_kill":"yes"})")),
            "status: 'remote_kill' is not true or false");
  EXPECT_EQ(
      status_refusal(status_with(R"(,"collect":{"gpus":[{"index":-1}]})")),
      "status.collect: 'index' is not in range");
  EXPECT_EQ(
      status_refusal(status_with(R"(,"collect":{"collections_total":1.5})")),
      "status.collect: 'collections_total' is not a whole number");
  EXPECT_THROW(parse_status_json(std::string(100000, '[')), JsonTooDeep);
}

TEST(StatusJson, OddButHarmlessValuesAreBounded) {
  const std::string long_version(10000, 'x');
  const StatusReply r = parse_status_json(status_with(
      R"(,"collect":{"interval_s":1e9,"version":")" + long_version + R"("})"));
  EXPECT_EQ(r.collect.interval_s, 1);  // out of reason: the default
  EXPECT_EQ(r.collect.version.size(), 64u);
  // An older serve without "collect": the defaults.
  EXPECT_EQ(parse_status_json(status_with("")).collect.interval_s, 1);
}

}  // namespace
}  // namespace gd::api
