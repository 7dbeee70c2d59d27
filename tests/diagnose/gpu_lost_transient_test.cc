// gpu-lost vs a transient failed read: ERR! fields, a stale reading or one
// "lost" sample that answers again are not a GPU that fell off the bus; a
// loss that persists, lasts to the end, or comes with Xid 79 is.
#include <gtest/gtest.h>

#include "scenario_builder.h"

namespace gd::test {
namespace {

Event lost_event(int gpu) {
  Event e;
  e.kind = "gpu_lost";
  e.gpu = gpu;
  e.text = "GPU " + std::to_string(gpu) + ": NVML reports the GPU is lost";
  return e;
}

// GPU 0 busy for 120 s, lost in samples [from, to) (a gpu_lost event at
// `from`, as the collector emits it).
std::vector<Sample> lost_between(size_t from, size_t to) {
  Jitter j;
  return make_samples(120, 1.0, [&](size_t i, Sample& s) {
    if (i >= from && i < to) {
      s.gpus.push_back(lost_gpu(0));
      if (i == from) s.events.push_back(lost_event(0));
    } else {
      s.gpus.push_back(busy_gpu(0, j));
    }
  });
}

TEST(GpuLostTransient, FailedReadsAndAStaleReadingAreNotALostGpu) {
  Jitter j;
  auto samples = make_samples(120, 1.0, [&](size_t i, Sample& s) {
    GpuSample g = busy_gpu(0, j);
    if (i % 30 == 10) {
      g.temp_c.reset(), g.power_w.reset();
      g.read_errors = {"temp_c", "power_w"};
    }
    if (i == 50) {
      g = GpuSample{};
      g.index = 0, g.stale = true;
    }
    s.gpus.push_back(g);
  });
  EXPECT_TRUE(
      with_id(run_diagnose(make_header(1), samples), "gpu-lost").empty());
}

TEST(GpuLostTransient, OneLostSampleThatAnswersAgainIsTransient) {
  auto r = run_diagnose(make_header(1), lost_between(60, 61));
  EXPECT_TRUE(with_id(r, "gpu-lost").empty());
  r = run_diagnose(make_header(1), lost_between(60, 62));
  EXPECT_TRUE(with_id(r, "gpu-lost").empty());
}

TEST(GpuLostTransient, ALossThatPersistsOrLastsToTheEndIsLost) {
  auto persisted = run_diagnose(make_header(1), lost_between(60, 63));
  ASSERT_EQ(with_id(persisted, "gpu-lost").size(), 1u);
  // Lost in the last sample only: it never answered again.
  auto at_end = run_diagnose(make_header(1), lost_between(119, 120));
  ASSERT_EQ(with_id(at_end, "gpu-lost").size(), 1u);
}

TEST(GpuLostTransient, OneLostSampleWithXid79IsLost) {
  auto samples = lost_between(60, 61);
  samples[60].events.push_back(xid_event(
      0, 79,
      "NVRM: Xid (PCI:0000:07:00): 79, pid=0, GPU has fallen off the bus."));
  auto f = with_id(run_diagnose(make_header(1), samples), "gpu-lost");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, "critical");
}

}  // namespace
}  // namespace gd::test
