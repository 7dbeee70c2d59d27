// A driver call that hangs must never hang the tool: samples, init and
// destruction are all bounded.
#include <gtest/gtest.h>

#include <ctime>
#include <thread>

#include "fake_scenario.h"

namespace {

using gd_test::fake_options;
using gd_test::FakeScenario;
using gd_test::json;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

json hang(const std::string& function, int gpu, double seconds) {
  return json{{"function", function}, {"gpu", gpu}, {"hang_s", seconds}};
}

// One fake GPU whose nvmlInit_v2 carries `fault` (hang_s, latency_ms...).
void install_one_gpu_with_init_fault(json fault, const std::string& name) {
  FakeScenario s = FakeScenario::with_gpus(1);
  fault["function"] = "nvmlInit_v2";
  s.header["faults"] = json::array({fault});
  s.install(name);
}

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

TEST(GpuSourceDeadline, HungCallMakesOnlyThatGpuStaleWithinTheDeadline) {
  FakeScenario s = FakeScenario::with_gpus(2);
  s.header["faults"] = json::array({hang("nvmlDeviceGetPowerUsage", 0, 30)});
  s.install("hang_sample");
  auto o = fake_options();
  o.deadline = 200ms;
  gd::GpuSource c(o);
  ASSERT_EQ(c.status(), gd::kNvmlOk) << c.error();

  std::vector<gd::Event> events;
  auto t0 = Clock::now();
  auto samples = c.sample(events);
  const double took = ms_since(t0);
  EXPECT_GE(took, 190);
  EXPECT_LT(took, 700);
  EXPECT_TRUE(samples[0].stale);
  EXPECT_EQ(samples[0].index, 0);
  gd_test::expect_no_values(samples[0]);
  gd_test::expect_sample_matches(samples[1], s.samples[0]["gpus"][1]);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, "nvml_error");
  EXPECT_EQ(events[0].gpu, 0);
  EXPECT_NE(events[0].text.find("did not return within 200 ms"),
            std::string::npos)
      << events[0].text;

  // Still hung: skipped at once (no second thread into the driver), no new
  // event, the other GPU keeps coming.
  events.clear();
  t0 = Clock::now();
  samples = c.sample(events);
  EXPECT_LT(ms_since(t0), 150);
  EXPECT_TRUE(samples[0].stale);
  EXPECT_TRUE(samples[1].power_w.has_value());
  EXPECT_TRUE(events.empty());
}

TEST(GpuSourceDeadline, GpuIsReadAgainOnceItsHungCallReturns) {
  FakeScenario s = FakeScenario::with_gpus(2);
  json h = hang("nvmlDeviceGetPowerUsage", 0, 1.0);
  h["until_s"] = 0.5;  // later calls answer at once
  s.header["faults"] = json::array({h});
  s.install("hang_then_return");
  auto o = fake_options();
  o.deadline = 200ms;
  gd::GpuSource c(o);
  std::vector<gd::Event> events;
  EXPECT_TRUE(c.sample(events).at(0).stale);
  const auto t0 = Clock::now();
  bool fresh = false;
  while (!fresh && ms_since(t0) < 5000) {
    std::this_thread::sleep_for(100ms);
    auto g = c.sample(events).at(0);
    fresh = !g.stale;
    if (fresh) gd_test::expect_sample_matches(g, s.samples[0]["gpus"][0]);
  }
  EXPECT_TRUE(fresh) << "GPU 0 never came back after its hung call returned";
}

TEST(GpuSourceDeadline, DestructorDoesNotWaitForAHungCall) {
  FakeScenario s = FakeScenario::with_gpus(2);
  s.header["faults"] = json::array({hang("nvmlDeviceGetTemperature", 1, 30)});
  s.install("hang_destroy");
  auto o = fake_options();
  o.deadline = 100ms;
  auto c = std::make_unique<gd::GpuSource>(o);
  std::vector<gd::Event> events;
  EXPECT_TRUE(c->sample(events).at(1).stale);
  const auto t0 = Clock::now();
  c.reset();
  EXPECT_LT(ms_since(t0), 500);
}

TEST(GpuSourceDeadline, HungNvmlInitIsBoundedAndReported) {
  install_one_gpu_with_init_fault({{"hang_s", 30}}, "hang_init");
  auto o = fake_options();
  o.init_deadline = 300ms;
  const auto t0 = Clock::now();
  {
    gd::GpuSource c(o);
    EXPECT_EQ(c.status(), gd::kNvmlError);
    EXPECT_NE(c.error().find("did not return within 300 ms"), std::string::npos)
        << c.error();
    EXPECT_TRUE(c.gpus().empty());
    std::vector<gd::Event> events;
    EXPECT_TRUE(c.sample(events).empty());
  }
  EXPECT_LT(ms_since(t0), 1000);
}

// A read deadline shorter than the driver's GPU initialisation (seconds
// without persistence mode) does not make NVML's load fail: init waits at
// least Options::kLoadDeadlineFloor.
TEST(GpuSourceDeadline, ASlowNvmlInitIsWaitedForPastAShortReadDeadline) {
  install_one_gpu_with_init_fault({{"latency_ms", 1500}}, "slow_init");
  auto o = fake_options();
  o.deadline = 200ms;
  gd::GpuSource c(o);
  EXPECT_EQ(c.status(), gd::kNvmlOk) << c.error();
  EXPECT_EQ(c.gpus().size(), 1u);
}

TEST(GpuSourceDeadline, HungStaticFactsAreBoundedAndThatGpuIsStale) {
  FakeScenario s = FakeScenario::with_gpus(2);
  s.header["faults"] = json::array({hang("nvmlDeviceGetSerial", 1, 30)});
  s.install("hang_static");
  auto o = fake_options();
  o.deadline = 200ms;
  const auto t0 = Clock::now();
  gd::GpuSource c(o);
  EXPECT_LT(ms_since(t0), 800);
  ASSERT_EQ(c.status(), gd::kNvmlOk) << c.error();
  ASSERT_EQ(c.gpus().size(), 2u);
  gd_test::expect_info_matches(c.gpus()[0], s.header["gpus"][0]);
  EXPECT_EQ(c.gpus()[1].index, 1);
  EXPECT_EQ(c.gpus()[1].uuid, "");  // its facts could not be read in time
  std::vector<gd::Event> events;
  auto samples = c.sample(events);
  EXPECT_TRUE(samples[1].stale);
  EXPECT_FALSE(samples[0].stale);
}

double process_cpu_ms() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

TEST(GpuSourceDeadline, SampleOfEightGpusCostsLittleCpu) {
  FakeScenario s = FakeScenario::with_gpus(8);
  s.install("cpu_cost");
  gd::GpuSource c(fake_options());
  ASSERT_EQ(c.gpus().size(), 8u);
  std::vector<gd::Event> events;
  c.sample(events);  // warm-up: buffers sized
  constexpr int kSamples = 300;
  const double cpu0 = process_cpu_ms();
  const auto t0 = Clock::now();
  for (int i = 0; i < kSamples; ++i) c.sample(events);
  const double cpu_per_sample = (process_cpu_ms() - cpu0) / kSamples;
  const double wall_per_sample = ms_since(t0) / kSamples;
  RecordProperty("cpu_ms_per_sample", std::to_string(cpu_per_sample));
  std::printf(
      "8-GPU sample against the fake: %.3f ms CPU (all threads, fake "
      "included), "
      "%.3f ms wall\n",
      cpu_per_sample, wall_per_sample);
  EXPECT_TRUE(events.empty());
  // Goal is well under 1 ms; the bound leaves room for sanitizer builds.
  EXPECT_LT(cpu_per_sample, 5.0);
}

}  // namespace
