// A week of short GPU processes (serve's Usage page diagnoses a week of
// history): the rules' per-pid state must not grow with the number of pids
// that came and went, only with those still running or still able to be a
// finding. 60,480 short processes once took serve from 147 to 397 MB.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include "peak_memory.h"
#include "scenario_builder.h"
#include "text_contains.h"

namespace gd::test {
namespace {

constexpr size_t kWeekAt10s = 7 * 86400 / 10;
constexpr size_t kSamplesPerProcess = 8;  // 80 s each

// Eight GPUs, each running one short process after another: a new pid
// every 80 s on every GPU, 60,480 in the week. Half the processes wait
// on their input (the GPU idles in every other sample), so the rules that
// follow a job keep their state for them too.
class ShortProcessWeek : public SampleSource {
 public:
  bool next(Sample& out) override {
    if (i_ >= kWeekAt10s) return false;
    out = Sample{};
    out.t = kT0 + 10.0 * static_cast<double>(i_);
    const size_t generation = i_ / kSamplesPerProcess;
    for (int g = 0; g < 8; ++g) {
      const auto pid = static_cast<uint32_t>(100000 + generation * 8 + g);
      auto gs = busy_gpu(g, j_);
      if (generation % 2 == 0 && i_ % 2 == 0) gs.util_pct = 3;
      gs.processes = std::vector<GpuProcess>{{pid, 20 * kGiB, "compute"}};
      out.gpus.push_back(gs);
      out.processes.push_back(process(pid, "python"));
    }
    ++i_;
    return true;
  }

 private:
  size_t i_ = 0;
  Jitter j_;
};

TEST(PidChurn, AWeekOfShortProcessesRunsInBoundedMemory) {
  auto h = make_header(8);
  ShortProcessWeek week;
  const long before = max_rss_kib();
  auto r = diagnose(h, week, {});
  const long growth_kib = max_rss_kib() - before;
  EXPECT_EQ(r.window.samples, kWeekAt10s);
  std::fprintf(stderr, "peak RSS grew by %ld KiB over %zu pids\n", growth_kib,
               kWeekAt10s / kSamplesPerProcess * 8);
#if GD_TEST_ASAN
  (void)growth_kib;
#else
  // About 1.5 KB per pid that came and went, summed over the rules, was
  // ~90 MB here.
  EXPECT_LT(growth_kib, 24 * 1024)
      << "peak RSS grew by " << growth_kib << " KiB";
#endif
  // Every finding's text stays short: no list of every pid.
  for (const auto& f : r.findings) {
    EXPECT_LT(f.evidence.size(), 4096u) << f.id;
    EXPECT_LT(f.title.size(), 512u) << f.id;
  }
}

}  // namespace
}  // namespace gd::test
