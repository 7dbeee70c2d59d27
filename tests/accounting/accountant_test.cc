#include "accounting/accountant.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
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

std::string pid_key(uint32_t pid, double start) {
  return "pid:" + std::to_string(pid) + "@" +
         std::to_string(static_cast<int64_t>(start));
}

// GPU 0 shared by a two-rank torchrun job (inside the window) and a
// python job; GPU 1 a Slurm job alone, its counter reset and two samples
// lost; GPU 2 nobody's. The node stops sampling for 80 s once.
Scenario shared_node() {
  Scenario s;
  s.t0 = 1000;
  s.t1 = 1300;
  GpuSpec g0{.watts = 200, .util = 60};
  GpuSpec g1{.watts = 300, .util = 90};
  g1.reset_at = 1050;
  g1.lost = {{1080, 1082}};
  GpuSpec g2{.watts = 60, .util = 0};
  s.gpus = {g0, g1, g2};
  JobSpec a0{.key = pid_key(100, 1009),
             .pid = 101,
             .ppid = 100,
             .parent_name = "torchrun",
             .gpu = 0,
             .from = 1010,
             .to = 1070,
             .mem = 10 * kGiB,
             .sm = 20};
  JobSpec a1 = a0;
  a1.pid = 102;
  a1.sm = 10;
  a1.mem = 6 * kGiB;
  JobSpec b{.key = pid_key(200, 1000),
            .pid = 200,
            .ppid = 1,
            .user = "bob",
            .gpu = 0,
            .from = 1000,
            .to = 1250,
            .mem = 30 * kGiB,
            .sm = 10};
  JobSpec c{.key = "slurm:1234",
            .pid = 300,
            .ppid = 1,
            .user = "carol",
            .cgroup =
                "/system.slice/slurmstepd.scope/job_1234/step_0/"
                "user/task_0",
            .gpu = 1,
            .from = 1000,
            .to = 1400,
            .mem = 70 * kGiB,
            .sm = 80};
  s.jobs = {a0, a1, b, c};
  s.node_gaps = {{1150, 1230}};
  return s;
}

AccountReport account(const Scenario& s, Expected& expected,
                      AccountOptions options = {}) {
  Accountant acc(s.header(), options);
  s.run([&](const Sample& sample) { acc.add(sample); }, expected);
  return acc.finish();
}

const GroupRow* find(const AccountReport& r, Dimension d,
                     const std::string& key) {
  for (const GroupRow& row : r.by(d))
    if (row.key == key) return &row;
  return nullptr;
}

double within_pct(double got, double want) {
  return want == 0 ? std::abs(got) : std::abs(got - want) / std::abs(want);
}

TEST(Accountant, TimeClosesOnEveryGpu) {
  Expected want;
  const AccountReport r = account(shared_node(), want);
  ASSERT_EQ(r.gpus.size(), 3u);
  for (const GpuAccount& g : r.gpus) {
    SCOPED_TRACE(g.index);
    EXPECT_DOUBLE_EQ(g.wall_s, 300);
    EXPECT_NEAR(g.held_s + g.unheld_s + g.unattributed_s, g.wall_s, 1e-6);
    // The one node gap: from the last sample before 1150 to 1230.
    EXPECT_EQ(g.gaps, 1);
    EXPECT_NEAR(g.unattributed_s, 81, 1e-6);
  }
  // The groups' held time adds up to the GPUs' held time, per dimension.
  double gpu_held = 0;
  for (const GpuAccount& g : r.gpus) gpu_held += g.held_s;
  for (Dimension d : kDimensions) {
    double sum = 0;
    for (const GroupRow& row : r.by(d)) sum += row.usage.held_s;
    EXPECT_NEAR(sum, gpu_held, 1e-6) << dimension_name(d);
  }
  EXPECT_NEAR(r.total.held_s, gpu_held, 1e-6);
}

TEST(Accountant, EnergyClosesAgainstTheCounter) {
  Expected want;
  const AccountReport r = account(shared_node(), want);
  for (const GpuAccount& g : r.gpus) {
    SCOPED_TRACE(g.index);
    EXPECT_LT(within_pct(g.energy_j, want.counter_delta_j[g.index]), 0.01);
    EXPECT_NEAR(g.held_energy_j + g.idle_energy_j + g.unattributed_energy_j,
                g.energy_j, 1e-6 * g.energy_j);
    EXPECT_EQ(g.energy_power_j, 0);  // every figure from the counter
    EXPECT_LT(within_pct(g.idle_energy_j, want.idle_energy_j[g.index]), 0.01);
  }
  // The idle GPU's energy is idle energy, given to nobody.
  EXPECT_EQ(r.gpus[2].held_s, 0);
  EXPECT_GT(r.gpus[2].idle_energy_j, 0);
  double groups = 0;
  for (const GroupRow& row : r.by(Dimension::kJob))
    groups += row.usage.energy_j;
  double held = 0;
  for (const GpuAccount& g : r.gpus) held += g.held_energy_j;
  EXPECT_NEAR(groups, held, 1e-6 * held);
}

TEST(Accountant, SharedGpuSplitBySmPercent) {
  Expected want;
  const AccountReport r = account(shared_node(), want);
  for (const auto& [key, joules] : want.job_energy_j) {
    SCOPED_TRACE(key);
    const GroupRow* row = find(r, Dimension::kJob, key);
    ASSERT_NE(row, nullptr);
    EXPECT_LT(within_pct(row->usage.energy_j, joules), 0.01);
    EXPECT_LT(within_pct(row->usage.held_s, want.job_held_s[key]), 0.01);
    EXPECT_GT(row->usage.split_sm_s, 0);
    EXPECT_EQ(row->usage.split_memory_s, 0);
  }
  // Two ranks under one torchrun are one job.
  const GroupRow* a = find(r, Dimension::kJob, pid_key(100, 1009));
  ASSERT_NE(a, nullptr);
  EXPECT_NE(a->label.find("torchrun"), std::string::npos);
  EXPECT_EQ(a->gpu_mask, 1u);
  EXPECT_DOUBLE_EQ(a->first_t, 1009);
  EXPECT_DOUBLE_EQ(a->last_t, 1069);
  EXPECT_EQ(r.by(Dimension::kJob).size(), 3u);
}

TEST(Accountant, SplitByMemoryWithoutPerProcessSm) {
  Scenario s = shared_node();
  s.jobs[1].sm.reset();  // one holder without SM%: memory decides
  Expected want;
  const AccountReport r = account(s, want);
  const GroupRow* a = find(r, Dimension::kJob, pid_key(100, 1009));
  const GroupRow* b = find(r, Dimension::kJob, pid_key(200, 1000));
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_LT(within_pct(a->usage.energy_j, want.job_energy_j[a->key]), 0.01);
  EXPECT_LT(within_pct(b->usage.energy_j, want.job_energy_j[b->key]), 0.01);
  EXPECT_GT(a->usage.split_memory_s, 0);
  EXPECT_EQ(a->usage.split_sm_s, 0);
}

TEST(Accountant, CounterResetIsNotANegativeOrHugeDelta) {
  Expected want;
  const AccountReport r = account(shared_node(), want);
  const GpuAccount& g1 = r.gpus[1];
  EXPECT_EQ(g1.counter_resets, 1);
  // 300 W over the attributed 219 s plus the gap's counter delta.
  EXPECT_LT(within_pct(g1.energy_j, want.counter_delta_j[1]), 0.01);
  const GroupRow* c = find(r, Dimension::kJob, "slurm:1234");
  ASSERT_NE(c, nullptr);
  EXPECT_LT(within_pct(c->usage.energy_j, want.job_energy_j["slurm:1234"]),
            0.01);
  EXPECT_EQ(c->label, "slurm 1234");
}

TEST(Accountant, LostSamplesShorterThanAGapAreAttributed) {
  Expected want;
  const AccountReport r = account(shared_node(), want);
  // GPU 1 lost 2 samples: its 3 s interval is attributed, only the node
  // gap is not.
  EXPECT_NEAR(r.gpus[1].held_s, r.gpus[0].held_s + r.gpus[0].unheld_s, 1e-6);
  EXPECT_NEAR(r.gpus[1].unattributed_s, 81, 1e-6);
}

TEST(Accountant, PowerWhereTheCounterIsAbsent) {
  Scenario s = shared_node();
  s.gpus[0].counter = false;
  Expected want;
  const AccountReport r = account(s, want);
  const GpuAccount& g0 = r.gpus[0];
  EXPECT_GT(g0.energy_power_j, 0);
  EXPECT_EQ(g0.energy_counter_j, 0);
  // A gap's power x dt is a guess: not counted at all.
  EXPECT_EQ(g0.unattributed_energy_j, 0);
  EXPECT_NEAR(g0.energy_j, 200 * (300 - 81), 1e-6);
  const GroupRow* b = find(r, Dimension::kJob, pid_key(200, 1000));
  ASSERT_NE(b, nullptr);
  EXPECT_GT(b->usage.energy_power_j, 0);
}

TEST(Accountant, UsersContainersAndGpus) {
  Expected want;
  const AccountReport r = account(shared_node(), want);
  EXPECT_NE(find(r, Dimension::kUser, "u:alice"), nullptr);
  EXPECT_NE(find(r, Dimension::kUser, "u:bob"), nullptr);
  EXPECT_NE(find(r, Dimension::kUser, "u:carol"), nullptr);
  ASSERT_EQ(r.by(Dimension::kContainer).size(), 1u);
  EXPECT_EQ(r.by(Dimension::kContainer)[0].label, "(no container)");
  // Sorted by held time: GPU 1 (always held) first.
  ASSERT_EQ(r.by(Dimension::kGpu).size(), 3u);
  EXPECT_EQ(r.by(Dimension::kGpu)[0].key, "gpu:1");
  EXPECT_EQ(r.by(Dimension::kGpu)[2].key, "gpu:2");
}

TEST(Accountant, IdleHeldAndBusy) {
  Scenario s = shared_node();
  s.gpus[1].util = 0;  // carol's job holds GPU 1 and does nothing
  Expected want;
  const AccountReport r = account(s, want);
  const GroupRow* c = find(r, Dimension::kJob, "slurm:1234");
  ASSERT_NE(c, nullptr);
  EXPECT_NEAR(c->usage.idle_held_s, c->usage.held_s, 1e-9);
  EXPECT_EQ(c->usage.busy_s, 0);
  const GroupRow* b = find(r, Dimension::kJob, pid_key(200, 1000));
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->usage.idle_held_s, 0);
  EXPECT_GT(b->usage.busy_s, 0);
  EXPECT_EQ(b->usage.sm_measured_s, 0);  // no GPM in this trace
}

TEST(Accountant, HostileNumberOfPidsIsFoldedIntoOther) {
  Scenario s;
  s.t0 = 0;
  s.t1 = 400;
  s.gpus = {GpuSpec{.watts = 100, .util = 50}};
  // Job i holds the GPU for the one interval that ends at i + 1.
  for (uint32_t i = 0; i < 400; ++i)
    s.jobs.push_back(JobSpec{.key = pid_key(1000 + i, i),
                             .pid = 1000 + i,
                             .name = "p" + std::to_string(i),
                             .user = "u" + std::to_string(i),
                             .gpu = 0,
                             .from = static_cast<double>(i + 1),
                             .to = static_cast<double>(i + 2),
                             .mem = kGiB});
  Expected want;
  AccountOptions o;
  o.max_groups = 10;
  const AccountReport r = account(s, want, o);
  ASSERT_EQ(r.by(Dimension::kJob).size(), 11u);
  EXPECT_TRUE(r.by(Dimension::kJob).back().folded);
  EXPECT_EQ(r.groups_folded[0], 390u);
  double sum = 0;
  for (const GroupRow& row : r.by(Dimension::kJob)) sum += row.usage.held_s;
  EXPECT_NEAR(sum, r.gpus[0].held_s, 1e-6);
  EXPECT_NEAR(r.gpus[0].held_s, 400, 1e-6);
}

// One GPU listing 200k processes: hashed, not searched (a quadratic walk
// would take minutes here), and folded past the cap.
TEST(Accountant, MillionsOfGpuProcessesStayLinear) {
  TraceHeader h;
  Accountant acc(h, AccountOptions{});
  for (int k = 0; k < 2; ++k) {
    Sample s;
    s.t = 10 + k;
    GpuSample g;
    g.util_pct = 50;
    g.power_w = 100;
    g.processes.emplace();
    for (uint32_t pid = 1; pid <= 200000; ++pid) {
      GpuProcess gp;
      gp.pid = pid;
      gp.used_bytes = 1 << 20;
      g.processes->push_back(gp);
    }
    s.gpus = {g};
    acc.add(s);
  }
  const AccountReport r = acc.finish();
  ASSERT_EQ(r.by(Dimension::kJob).size(), 1001u);
  EXPECT_EQ(r.groups_folded[0], std::min<size_t>(199000, kFoldedCountMax));
  double held = 0, energy = 0;
  for (const GroupRow& row : r.by(Dimension::kJob)) {
    held += row.usage.held_s;
    energy += row.usage.energy_j;
  }
  EXPECT_NEAR(held, 1, 1e-9);
  EXPECT_NEAR(energy, 100, 1e-6);
}

// Numbers no GPU reports: every figure stays finite and still closes.
TEST(Accountant, HostileNumbersStayFiniteAndClose) {
  TraceHeader h;
  GpuInfo info;
  info.memory_total_bytes = 80 * kGiB;
  h.gpus = {info};
  Accountant acc(h, AccountOptions{});
  for (int k = 0; k < 3; ++k) {
    Sample s;
    s.t = 10 + k;
    GpuSample g;
    g.util_pct = 1e308;
    g.gpm.sm_active_pct = -5;
    g.energy_mj_total = uint64_t{1000} * static_cast<uint64_t>(k);
    g.processes.emplace();
    for (uint32_t pid : {7u, 8u}) {
      GpuProcess gp;
      gp.pid = pid;
      gp.used_bytes = UINT64_MAX;
      gp.sm_util_pct = pid == 7 ? 1e308 : -1;
      g.processes->push_back(gp);
    }
    s.gpus = {g};
    acc.add(s);
  }
  const AccountReport r = acc.finish();
  ASSERT_EQ(r.gpus.size(), 1u);
  const GpuAccount& g = r.gpus[0];
  EXPECT_NEAR(g.held_s + g.unheld_s + g.unattributed_s, g.wall_s, 1e-9);
  EXPECT_NEAR(g.busy_s, 2, 1e-9);  // util clamped to 100%
  EXPECT_EQ(g.sm_active_s, 0);     // clamped to 0%
  double held = 0, energy = 0;
  for (const GroupRow& row : r.by(Dimension::kJob)) {
    EXPECT_TRUE(std::isfinite(row.usage.busy_s));
    EXPECT_LE(row.usage.mem_frac_s, row.usage.mem_time_s);
    held += row.usage.held_s;
    energy += row.usage.energy_j;
  }
  EXPECT_NEAR(held, 2, 1e-9);
  EXPECT_NEAR(energy, 2, 1e-9);  // 1 J a second from the counter
}

// Findings go to the groups whose GPU processes they name, with the share
// of each group's time they cover.
TEST(Accountant, FindingsGoToTheGroupsOfTheirPids) {
  const Scenario s = shared_node();
  Expected want;
  Accountant acc(s.header(), AccountOptions{});
  s.run([&](const Sample& sample) { acc.add(sample); }, want);
  acc.attribute({{"input-bound", "warning", {101}, 1010, 1040},
                 {"input-bound", "warning", {102}, 1000, 1020},
                 {"gpu-idle-allocated", "warning", {300, 999999}, 0, 5000},
                 {"memory-leak", "warning", {424242}, 1000, 1100}});
  const AccountReport r = acc.finish();
  const GroupRow* a = find(r, Dimension::kJob, pid_key(100, 1009));
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->findings.size(), 1u);  // one id per group, the longest
  EXPECT_EQ(a->findings[0].id, "input-bound");
  const double span = a->last_t - a->first_t;
  EXPECT_NEAR(a->findings[0].seconds, 30, 1e-9);
  EXPECT_NEAR(a->findings[0].share, 30 / span, 1e-9);
  const GroupRow* c = find(r, Dimension::kJob, "slurm:1234");
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(c->findings.size(), 1u);
  EXPECT_EQ(c->findings[0].id, "gpu-idle-allocated");
  EXPECT_NEAR(c->findings[0].share, 1, 1e-9);  // clipped to its time
  const GroupRow* b = find(r, Dimension::kJob, pid_key(200, 1000));
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(b->findings.empty());  // no finding names its pids
  const GroupRow* alice = find(r, Dimension::kUser, "u:alice");
  ASSERT_NE(alice, nullptr);
  ASSERT_EQ(alice->findings.size(), 1u);
  EXPECT_EQ(alice->findings[0].id, "input-bound");
}

// Held seconds per job and user key over 21 samples of one GPU process
// whose cgroup names a Slurm job from 11 on and whose user changes at 16.
// `vouch`: tell add() where the processes repeat those of the sample
// before, as a history scan does.
std::map<std::string, double> held_by_owner(bool vouch) {
  TraceHeader h;
  GpuInfo info;
  info.index = 0;
  info.memory_total_bytes = 80 * kGiB;
  h.gpus.push_back(info);
  Accountant acc(h, {});
  Sample s;  // one object refilled per sample, as a history scan does
  for (int i = 0; i <= 20; ++i) {
    s.t = 1000 + i;
    s.gpus.assign(1, GpuSample{});
    s.gpus[0].index = 0;
    s.gpus[0].util_pct = 50;
    s.gpus[0].power_w = 100;
    s.gpus[0].processes = std::vector<GpuProcess>{{100, 10 * kGiB, "compute"}};
    ProcessSample p;
    p.pid = 100;
    p.ppid = 1;
    p.name = "python";
    p.user = i > 15 ? "bob" : "alice";
    if (i > 10) p.cgroup = "/slurm/uid_1000/job_42/step_0";
    s.processes.assign(1, p);
    acc.add(s, vouch && i != 0 && i != 11 && i != 16);
  }
  const AccountReport r = acc.finish();
  std::map<std::string, double> held;
  for (const GroupRow& row : r.by(Dimension::kJob))
    held[row.key] = row.usage.held_s;
  for (const GroupRow& row : r.by(Dimension::kUser))
    held[row.key] = row.usage.held_s;
  return held;
}

TEST(Accountant, OwnersFollowTheProcessTreeAsItChanges) {
  std::map<std::string, double> held = held_by_owner(false);
  EXPECT_DOUBLE_EQ(held["pid:100"], 10);
  EXPECT_DOUBLE_EQ(held["slurm:42"], 10);
  EXPECT_DOUBLE_EQ(held["u:alice"], 15);
  EXPECT_DOUBLE_EQ(held["u:bob"], 5);
  // Told where the processes repeat, the accountant gives the same.
  EXPECT_EQ(held_by_owner(true), held);
}

TEST(Accountant, WindowBounds) {
  Expected want;
  AccountOptions o;
  o.start = 1100;
  o.end = 1140;
  const AccountReport r = account(shared_node(), want, o);
  EXPECT_DOUBLE_EQ(r.start, 1100);
  EXPECT_DOUBLE_EQ(r.end, 1140);
  EXPECT_EQ(r.samples, 41u);
  EXPECT_NEAR(r.gpus[0].wall_s, 40, 1e-9);
  EXPECT_EQ(find(r, Dimension::kJob, pid_key(100, 1009)), nullptr);
}

}  // namespace
}  // namespace gd::accounting
