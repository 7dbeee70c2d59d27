// The sample event of /api/v1/events: what serve writes reads back field for
// field, keeps the bytes the dashboard has always been sent, and what is not
// a sample event is refused with a reason.
#include "api/sample_event_json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "trace/trace_io.h"

namespace gd::api {
namespace {

std::string event_of(const Sample& s, const std::vector<GpuMemoryShare>& m) {
  std::string out;
  append_sample_event_json(out, s, m);
  return out;
}

// Every sample of a recorded scenario, as serve sends it (no host process
// list), with a memory share per GPU.
std::vector<SampleEvent> scenario_events() {
  std::vector<SampleEvent> out;
  TraceReader reader(std::string(GD_TEST_DATA) + "/scenario_4gpu.jsonl");
  Sample s;
  while (reader.next(s)) {
    SampleEvent e;
    e.sample.t = s.t;
    e.sample.gpus = s.gpus;
    e.sample.host = s.host;
    e.sample.events = s.events;
    for (const auto& g : s.gpus)
      e.memory.push_back({g.index, 1ull << 30, 3ull << 28});
    out.push_back(std::move(e));
  }
  return out;
}

TEST(SampleEventJson, EverySampleOfAScenarioReadsBackTheSame) {
  auto events = scenario_events();
  ASSERT_GE(events.size(), 3u);
  for (const auto& e : events) {
    const std::string once = event_of(e.sample, e.memory);
    SampleEvent back = parse_sample_event_json(once);
    EXPECT_EQ(sample_to_json(back.sample), sample_to_json(e.sample));
    ASSERT_EQ(back.memory.size(), e.memory.size());
    for (size_t i = 0; i < e.memory.size(); ++i) {
      EXPECT_EQ(back.memory[i].gpu, e.memory[i].gpu);
      EXPECT_EQ(back.memory[i].live_process_bytes,
                e.memory[i].live_process_bytes);
      EXPECT_EQ(back.memory[i].unowned_bytes, e.memory[i].unowned_bytes);
    }
    EXPECT_EQ(event_of(back.sample, back.memory), once);
  }
}

// The dashboard reads these bytes (web/src/app.js): the sample in trace
// format under "sample", then "memory" with its keys in this order.
TEST(SampleEventJson, BytesAreTheTraceSampleAndTheMemoryShares) {
  const auto e = scenario_events().front();
  nlohmann::json memory = nlohmann::json::array();
  for (const auto& m : e.memory)
    memory.push_back({{"gpu", m.gpu},
                      {"live_process_bytes", m.live_process_bytes},
                      {"unowned_bytes", m.unowned_bytes}});
  EXPECT_EQ(event_of(e.sample, e.memory),
            "{\"sample\":" + sample_to_json(e.sample) +
                ",\"memory\":" + memory.dump() + "}");
}

TEST(SampleEventJson, WhatIsNotASampleEventIsRefusedWithAReason) {
  const std::string sample = sample_to_json(scenario_events().front().sample);
  auto refused = [](const std::string& body) {
    try {
      parse_sample_event_json(body);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(refused("[]").find("not a JSON object"), std::string::npos);
  EXPECT_NE(refused("{\"memory\":[]}").find("no 'sample'"), std::string::npos);
  EXPECT_NE(refused("{\"sample\":" + sample + "}").find("no 'memory'"),
            std::string::npos);
  EXPECT_NE(refused("{\"sample\":" + sample +
                    ",\"memory\":[{\"gpu\":5000,\"live_process_bytes\":0,"
                    "\"unowned_bytes\":0}]}")
                .find("gpu"),
            std::string::npos);
  EXPECT_NE(refused("{\"sample\":" + sample +
                    ",\"memory\":[{\"gpu\":0,\"live_process_bytes\":-1,"
                    "\"unowned_bytes\":0}]}")
                .find("live_process_bytes"),
            std::string::npos);
  EXPECT_NE(refused("{\"sample\":{\"t\":\"now\"},\"memory\":[]}"), "accepted");
  std::string many = "{\"sample\":" + sample + ",\"memory\":[";
  for (int i = 0; i < 1025; ++i)
    many += std::string(i ? "," : "") +
            "{\"gpu\":0,\"live_process_bytes\":0,\"unowned_bytes\":0}";
  EXPECT_NE(refused(many + "]}").find("more than 1024"), std::string::npos);
  EXPECT_NE(refused(std::string(100000, '[')), "accepted");
}

}  // namespace
}  // namespace gd::api
