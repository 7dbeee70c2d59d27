// The JSON API handlers of `serve` (serve/api.h) with fuzzed query
// parameters, a fuzzed clock and fuzzed process names on the scenario
// snapshot. Every reply is one line of valid JSON with status 200, 400 or
// 503, errors are {"error": "..."}, and a history query only reaches the
// store with a finite, ordered time range, a bounded number of points and
// of metrics (metric=a,b,c; step=auto), none empty; the alert history
// likewise. The dashboard's files are answered for any Accept-Encoding and
// If-None-Match: 200 with the identity or gzip bytes, or 304.
#include <fuzzer/FuzzedDataProvider.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "fuzz_check.h"
#include "serve/api.h"
#include "serve/web_page.h"
#include "trace/trace_io.h"

namespace {

using nlohmann::json;

std::shared_ptr<gd::Snapshot> scenario_snapshot() {
  gd::TraceReader reader(std::string(GD_TEST_DATA) + "/scenario_4gpu.jsonl");
  auto s = std::make_shared<gd::Snapshot>();
  s->header = std::make_shared<gd::TraceHeader>(reader.header());
  auto sample = std::make_shared<gd::Sample>();
  FUZZ_CHECK(reader.next(*sample), "the scenario has a sample");
  s->sample = sample;
  for (const auto& g : sample->gpus)
    s->gpu_health.push_back({g.index, true, false, sample->t});
  s->started_at = sample->t - 10;
  return s;
}

// Checks what reaches the store and answers an empty series.
class CheckingHistory : public gd::History {
 public:
  void set_header(const gd::TraceHeader&) override {}
  void append(const gd::Sample&) override {}
  void flush() override {}
  void maintain(double) override {}
  std::string query_json(const gd::HistoryQuery& q) const override {
    FUZZ_CHECK(!q.metric.empty(), "metric");
    FUZZ_CHECK(!q.metrics.empty() && q.metrics.size() <= 32, q.metric);
    FUZZ_CHECK(q.metrics.front() == q.metric, q.metric);
    for (const auto& m : q.metrics) FUZZ_CHECK(!m.empty(), q.metric);
    FUZZ_CHECK(std::isfinite(q.since) && std::isfinite(q.until), q.metric);
    FUZZ_CHECK(q.since <= q.until, q.metric);
    FUZZ_CHECK(std::isfinite(q.step) && q.step >= 0, q.metric);
    FUZZ_CHECK(q.step == 0 || (q.until - q.since) / q.step <= 11000, q.metric);
    FUZZ_CHECK(!q.gpu || *q.gpu >= 0, q.metric);
    FUZZ_CHECK(!q.pid || *q.pid >= 0, q.metric);
    if (q.metric == "bogus") throw gd::HistoryQueryError("unknown metric");
    return "{\"series\": []}";
  }
  double stored_step_s(double age_s) const override {
    FUZZ_CHECK(std::isfinite(age_s) && age_s >= 0, "age");
    return age_s > 86400 ? 60 : 0;
  }
  std::string alerts_json(double since, double until) const override {
    FUZZ_CHECK(std::isfinite(since) && std::isfinite(until), "alerts range");
    FUZZ_CHECK(since <= until, "alerts range");
    return "{\"alerts\": []}";
  }
};

void check_reply(const gd::ApiReply& r) {
  FUZZ_CHECK(r.status == 200 || r.status == 400 || r.status == 503, r.body);
  FUZZ_CHECK(gd::fuzz::one_line(r.body), r.body);
  FUZZ_CHECK(json::accept(r.body), r.body);
  if (r.status == 400) {
    const json j = json::parse(r.body);
    FUZZ_CHECK(j.is_object() && j.contains("error") && j["error"].is_string(),
               r.body);
  }
}

gd::QueryParams params(FuzzedDataProvider& in) {
  static const char* const kNames[] = {"gpu",  "metric", "since", "until",
                                       "step", "pid",    "x"};
  gd::QueryParams p;
  const int n = in.ConsumeIntegralInRange(0, 6);
  for (int i = 0; i < n; ++i) {
    const char* name = kNames[in.ConsumeIntegralInRange<size_t>(0, 6)];
    if (in.ConsumeBool() && std::string(name) == "step") {
      p.emplace(name, "auto");
    } else if (in.ConsumeBool() && std::string(name) == "metric") {
      // A list of metrics, some maybe empty or repeated.
      std::string list;
      const int k = in.ConsumeIntegralInRange(1, 40);
      for (int j = 0; j < k; ++j) {
        if (j) list += ',';
        list +=
            in.ConsumeBool() ? "gpu.util_pct" : in.ConsumeRandomLengthString(8);
      }
      p.emplace(name, list);
    } else {
      p.emplace(name, in.ConsumeRandomLengthString(32));
    }
  }
  return p;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::shared_ptr<gd::Snapshot> base = scenario_snapshot();
  FuzzedDataProvider in(data, size);
  const double now = in.ConsumeBool()
                         ? base->sample->t + in.ConsumeIntegral<int16_t>()
                         : in.ConsumeFloatingPoint<double>();
  const gd::QueryParams p = params(in);

  gd::Snapshot s = *base;
  if (in.ConsumeBool()) {  // process names and users are the processes' own
    auto sample = std::make_shared<gd::Sample>(*base->sample);
    for (auto& proc : sample->processes) {
      proc.name = in.ConsumeRandomLengthString(16);
      proc.user = in.ConsumeRandomLengthString(16);
      proc.cmdline = in.ConsumeRandomLengthString(64);
    }
    s.sample = sample;
  }

  check_reply(gd::api_processes(s, p));
  CheckingHistory history;
  check_reply(gd::api_history(&history, p, now));
  check_reply(gd::api_history(nullptr, p, now));
  check_reply(gd::api_alerts(&history, p, now));
  check_reply(gd::api_alerts(nullptr, p, now));
  {
    // The dashboard's files under any request headers.
    const std::string enc = in.ConsumeRandomLengthString(48);
    const std::string inm = in.ConsumeRandomLengthString(48);
    for (const auto& a : gd::web_assets()) {
      const gd::ApiReply r = gd::web_asset_reply(a, enc, inm);
      FUZZ_CHECK(r.status == 200 || r.status == 304, enc + " | " + inm);
      if (r.status == 200)
        FUZZ_CHECK(r.static_body == a.body || r.static_body == a.gzip, enc);
      else
        FUZZ_CHECK(r.static_body.empty() && r.body.empty(), inm);
    }
  }
  check_reply(gd::api_healthz(s, now));
  if (in.ConsumeBool()) check_reply(gd::api_status(s, now));  // the costly one
  if (std::isfinite(now)) {
    const double span = std::fabs(in.ConsumeFloatingPoint<double>());
    if (std::isfinite(span) && span < 1e12) {
      const double step = gd::auto_step(now - span, now, now, 0);
      FUZZ_CHECK(std::isfinite(step) && step >= 0, "auto step");
      FUZZ_CHECK(step == 0 || span / step <= 11000, "auto step points");
    }
  }
  const std::string text = in.ConsumeRemainingBytesAsString();
  try {
    const double since = gd::parse_since(text, now);
    FUZZ_CHECK(!std::isnan(since), text);
  } catch (const std::invalid_argument&) {
  }
  try {
    const double step = gd::parse_step(text);
    FUZZ_CHECK(std::isfinite(step) && step >= 0, text);
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
