// The dashboard's live stream (serve/event_stream.h) without HTTP: what a
// stream sends, when it parks and wakes, and the bounds on streams and on
// each one's queue.
#include "serve/event_stream.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "trace/trace_io.h"

namespace gd {
namespace {

using nlohmann::json;

Snapshot snapshot_at(double t, std::optional<double> evaluated_at = {}) {
  TraceReader reader(std::string(GD_TEST_DATA) + "/scenario_4gpu.jsonl");
  Snapshot s;
  s.header = std::make_shared<TraceHeader>(reader.header());
  auto sample = std::make_shared<Sample>();
  EXPECT_TRUE(reader.next(*sample));
  sample->t = t;
  s.sample = sample;
  s.evaluated_at = evaluated_at;
  return s;
}

// Drains a stream; counts suspends and resumes like the HTTP layer would.
struct Reader {
  std::shared_ptr<EventStream> stream;
  int suspends = 0, resumes = 0;
  explicit Reader(std::shared_ptr<EventStream> s) : stream(std::move(s)) {
    stream->set_hooks([this] { ++suspends; }, [this] { ++resumes; });
  }
  std::string drain(EventStream::Read* last = nullptr) {
    std::string out;
    char buf[1000];
    for (;;) {
      size_t n = 0;
      auto r = stream->read(buf, sizeof buf, n);
      out.append(buf, n);
      if (r != EventStream::Read::kData) {
        if (last) *last = r;
        return out;
      }
    }
  }
};

// The JSON of every "event: NAME" in `text`.
std::vector<json> events(const std::string& text, const std::string& name) {
  std::vector<json> out;
  const std::string tag = "event: " + name + "\ndata: ";
  for (size_t at = text.find(tag); at != std::string::npos;
       at = text.find(tag, at + 1)) {
    const size_t begin = at + tag.size();
    out.push_back(
        json::parse(text.substr(begin, text.find('\n', begin) - begin)));
  }
  return out;
}

TEST(EventStream, NewStreamGetsTheLatestSampleThenParks) {
  EventHub hub(4, 1 << 20);
  hub.publish(snapshot_at(100, 99));
  Reader r(hub.open());
  EventStream::Read last;
  const std::string text = r.drain(&last);
  EXPECT_EQ(text.rfind("retry: 2000\n\n", 0), 0u);
  auto samples = events(text, "sample");
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0]["sample"]["t"], 100.0);
  EXPECT_EQ(samples[0]["sample"]["gpus"].size(), 4u);
  // The host process list is left out (the page asks for it separately).
  EXPECT_FALSE(samples[0]["sample"].contains("processes") &&
               !samples[0]["sample"]["processes"].empty());
  EXPECT_EQ(events(text, "findings").size(), 1u);
  EXPECT_EQ(last, EventStream::Read::kWait);
  EXPECT_EQ(r.suspends, 1);

  hub.publish(snapshot_at(101, 99));  // not re-evaluated: no findings event
  EXPECT_EQ(r.resumes, 1);
  const std::string next = r.drain();
  EXPECT_EQ(events(next, "sample").size(), 1u);
  EXPECT_EQ(events(next, "sample")[0]["sample"]["t"], 101.0);
  EXPECT_EQ(events(next, "findings").size(), 0u);
}

TEST(EventStream, MemoryNoLiveProcessOwns) {
  auto snap = snapshot_at(100);
  const std::string text = EventHub::sample_event(*snap.sample);
  auto j = events(text, "sample").at(0);
  ASSERT_FALSE(j["memory"].empty());
  for (const auto& m : j["memory"]) {
    const int gpu = m["gpu"];
    const auto& g = snap.sample->gpus.at(gpu);
    uint64_t live = 0;
    for (const auto& p : *g.processes) {
      for (const auto& proc : snap.sample->processes)
        if (proc.pid == p.pid && proc.state != "Z" && proc.state != "missing")
          live += p.used_bytes.value_or(0);
    }
    EXPECT_EQ(m["live_process_bytes"], live) << gpu;
    EXPECT_EQ(m["unowned_bytes"], *g.mem_used_bytes - live) << gpu;
  }
}

// The scenario's GPU 3: 16 GiB used, NVML lists pid 5200 without a size.
// Gone, all 16 GiB are owned by no live process (the figure of the
// finding, who and top); alive, how much it holds is unknown, and the
// dashboard gets no figure rather than a wrong one.
TEST(EventStream, MemoryOfAGoneOwnerWithoutASize) {
  auto snap = snapshot_at(100);
  auto sample = std::make_shared<Sample>(*snap.sample);
  auto memory_of_gpu3 = [](const Sample& s) {
    auto j = events(EventHub::sample_event(s), "sample").at(0);
    for (const auto& m : j["memory"])
      if (m["gpu"] == 3) return m;
    return nlohmann::json();
  };
  EXPECT_TRUE(memory_of_gpu3(*sample).is_null());
  for (auto& p : sample->processes)
    if (p.pid == 5200) p.state = "missing";
  auto m = memory_of_gpu3(*sample);
  ASSERT_FALSE(m.is_null());
  EXPECT_EQ(m["unowned_bytes"], 16ull << 30);
  EXPECT_EQ(m["live_process_bytes"], 0u);
}

TEST(EventStream, AtMostMaxStreams) {
  EventHub hub(2, 1 << 20);
  auto a = hub.open(), b = hub.open();
  ASSERT_TRUE(a && b);
  EXPECT_EQ(hub.open(), nullptr);
  a->detach();  // the connection closed
  EXPECT_NE(hub.open(), nullptr);
}

TEST(EventStream, SlowClientIsDroppedNotBuffered) {
  EventHub hub(4, 64 * 1024);
  Reader slow(hub.open()), fast(hub.open());
  for (int i = 0; i < 200; ++i) {
    hub.publish(snapshot_at(100 + i));
    fast.drain();
    EXPECT_LE(slow.stream->queued_bytes(), 64u * 1024);
  }
  EXPECT_TRUE(slow.stream->dropped());
  EXPECT_EQ(slow.stream->queued_bytes(), 0u);
  EXPECT_FALSE(fast.stream->dropped());
  EXPECT_EQ(hub.dropped_total(), 1u);
  EventStream::Read last;
  slow.drain(&last);
  EXPECT_EQ(last, EventStream::Read::kEnd);
}

TEST(EventStream, CloseAllEndsAndWakesParkedStreams) {
  EventHub hub(4, 1 << 20);
  Reader r(hub.open());
  r.drain();
  ASSERT_EQ(r.suspends, 1);
  hub.close_all();
  EXPECT_EQ(r.resumes, 1);
  EventStream::Read last;
  r.drain(&last);
  EXPECT_EQ(last, EventStream::Read::kEnd);
  EXPECT_EQ(hub.open(), nullptr);
}

}  // namespace
}  // namespace gd
