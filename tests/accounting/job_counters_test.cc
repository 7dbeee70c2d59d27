// serve's per-job counters: a bounded set of series whose values only grow
// and always add up to what the accountant gives every job.
#include "accounting/job_counters.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "scenario.h"

namespace gd::accounting {
namespace {

using testing::Expected;
using testing::GpuSpec;
using testing::JobSpec;
using testing::kGiB;
using testing::Scenario;

// Three jobs, one GPU each: A ends at 1100, B runs throughout, C starts at
// 1150, after A's slot is released (30 s without a GPU).
Scenario three_jobs() {
  Scenario s;
  s.t0 = 1000;
  s.t1 = 1300;
  s.gpus = {GpuSpec{.watts = 200, .util = 60},
            GpuSpec{.watts = 300, .util = 90},
            GpuSpec{.watts = 250, .util = 50}};
  JobSpec a{.key = "slurm:1",
            .pid = 101,
            .ppid = 1,
            .cgroup = "/system.slice/slurmstepd.scope/job_1/step_0/user/task_0",
            .gpu = 0,
            .from = 1000,
            .to = 1100,
            .mem = 10 * kGiB,
            .sm = 50};
  JobSpec b = a;
  b.key = "slurm:2";
  b.pid = 202;
  b.cgroup = "/system.slice/slurmstepd.scope/job_2/step_0/user/task_0";
  b.gpu = 1;
  b.to = 1400;
  JobSpec c = a;
  c.key = "slurm:3";
  c.pid = 303;
  c.cgroup = "/system.slice/slurmstepd.scope/job_3/step_0/user/task_0";
  c.gpu = 2;
  c.from = 1150;
  c.to = 1400;
  s.jobs = {a, b, c};
  return s;
}

struct Observed {
  std::map<std::string, Usage> last;  // each series' latest value
  bool grew_only = true;
  size_t most_series = 0;
};

Observed run(const Scenario& s, JobCounters& counters) {
  Observed o;
  Expected expected;
  s.run(
      [&](const Sample& sample) {
        counters.add(sample);
        const auto now = counters.counters();
        o.most_series = std::max(o.most_series, now.size());
        for (const JobCounter& c : now) {
          auto& last = o.last[c.key];
          if (c.usage.held_s < last.held_s || c.usage.energy_j < last.energy_j)
            o.grew_only = false;
          last = c.usage;
        }
      },
      expected);
  return o;
}

double total_held(const Observed& o) {
  double t = 0;
  for (const auto& [_, u] : o.last) t += u.held_s;
  return t;
}
double total_energy(const Observed& o) {
  double t = 0;
  for (const auto& [_, u] : o.last) t += u.energy_j;
  return t;
}

TEST(JobCounters, EndedJobsFreeTheirSlotAndTheSeriesAddUp) {
  const Scenario s = three_jobs();
  JobCounters counters(s.header(), 2, 30);
  const Observed o = run(s, counters);
  Accountant whole(s.header(), {});
  Expected expected;
  s.run([&](const Sample& x) { whole.add(x); }, expected);
  const AccountReport r = whole.finish();

  EXPECT_TRUE(o.grew_only);
  EXPECT_EQ(o.most_series, 3u);  // two slots and "other"
  // A's slot went to C: nothing spilled into "other".
  EXPECT_EQ(o.last.at("other").held_s, 0);
  EXPECT_GT(o.last.at("slurm:1").held_s, 90);
  EXPECT_GT(o.last.at("slurm:3").held_s, 140);
  std::vector<std::string> live;
  for (const auto& c : counters.counters()) live.push_back(c.key);
  EXPECT_EQ(live, (std::vector<std::string>{"slurm:2", "slurm:3", "other"}));
  EXPECT_NEAR(total_held(o), r.total.held_s, 1e-6);
  EXPECT_NEAR(total_energy(o), r.total.energy_j, 1e-6 * r.total.energy_j);
}

TEST(JobCounters, JobsBeyondTheSlotsGoToOther) {
  const Scenario s = three_jobs();
  JobCounters counters(s.header(), 1, 600);
  const Observed o = run(s, counters);
  EXPECT_TRUE(o.grew_only);
  EXPECT_EQ(o.most_series, 2u);
  EXPECT_EQ(o.last.count("slurm:1") + o.last.count("slurm:2"), 1u);
  EXPECT_EQ(o.last.count("slurm:3"), 0u);
  EXPECT_GT(o.last.at("other").held_s, 140);
  const auto& mine =
      o.last.count("slurm:1") ? o.last.at("slurm:1") : o.last.at("slurm:2");
  EXPECT_GT(mine.held_s, 90);
}

}  // namespace
}  // namespace gd::accounting
