// report --by pod / --by namespace: two pods time-sharing GPU 0 and one
// holding GPU 1; each pod's GPU-hours and energy are its own and the pods
// add up to the GPUs' (the issue's "closes within 1%").
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "accounting/accountant.h"

namespace gd::accounting {
namespace {

constexpr uint64_t kGib = 1ull << 30;

ProcessSample in_pod(uint32_t pid, const std::string& ns,
                     const std::string& name, bool deleted = false) {
  ProcessSample p;
  p.pid = pid;
  p.ppid = 1;
  p.user = "root";
  p.name = "python";
  p.state = "R";
  ProcessPod pod;
  pod.uid = "uid-" + std::to_string(pid);
  pod.namespace_ = ns;
  pod.name = name;
  pod.container = "main";
  pod.deleted = deleted;
  p.pod = pod;
  return p;
}

GpuSample gpu(int index, double util, double watts,
              std::vector<GpuProcess> procs) {
  GpuSample g;
  g.index = index;
  g.util_pct = util;
  g.power_w = watts;
  g.processes = std::move(procs);
  return g;
}

AccountReport cluster() {
  TraceHeader h;
  for (int i = 0; i < 3; ++i) {
    GpuInfo info;
    info.index = i;
    info.memory_total_bytes = 80 * kGib;
    h.gpus.push_back(info);
  }
  Accountant acc(h, AccountOptions{});
  for (int i = 0; i <= 60; ++i) {
    Sample s;
    s.t = 1000 + 10.0 * i;
    s.gpus = {gpu(0, 90, 300, {{1, 10 * kGib}, {2, 10 * kGib}}),
              gpu(1, 0, 60, {{3, 20 * kGib}}), gpu(2, 0, 50, {{4, 1 * kGib}})};
    // Pod ml/b's process is deleted half-way: still one row.
    s.processes = {in_pod(1, "ml", "a"), in_pod(2, "ml", "b", i > 30),
                   in_pod(3, "infer", "c")};
    ProcessSample plain;
    plain.pid = 4;
    plain.name = "plain";
    s.processes.push_back(plain);
    acc.add(s);
  }
  return acc.finish();
}

const GroupRow* row(const AccountReport& r, Dimension d,
                    const std::string& label) {
  for (const GroupRow& g : r.by(d))
    if (g.label == label) return &g;
  return nullptr;
}

TEST(PodDimension, EachPodHasItsOwnShareAndThePodsClose) {
  const AccountReport r = cluster();
  const GroupRow* a = row(r, Dimension::kPod, "ml/a");
  const GroupRow* b = row(r, Dimension::kPod, "ml/b");
  const GroupRow* c = row(r, Dimension::kPod, "infer/c");
  const GroupRow* none = row(r, Dimension::kPod, "(no pod)");
  ASSERT_TRUE(a && b && c && none);
  EXPECT_EQ(r.by(Dimension::kPod).size(), 4u);
  // Ten minutes: GPU 0 split equally between a and b, GPU 1 c's alone.
  EXPECT_NEAR(a->usage.held_s, 300, 1e-6);
  EXPECT_NEAR(b->usage.held_s, 300, 1e-6);
  EXPECT_NEAR(c->usage.held_s, 600, 1e-6);
  EXPECT_NEAR(c->usage.idle_held_s, 600, 1e-6);
  double held = 0, energy = 0;
  for (const GroupRow& g : r.by(Dimension::kPod)) {
    held += g.usage.held_s;
    energy += g.usage.energy_j;
  }
  EXPECT_NEAR(held, r.total.held_s, r.total.held_s * 0.01);
  EXPECT_NEAR(energy, r.total.energy_j, r.total.energy_j * 0.01);
  EXPECT_NEAR(c->usage.energy_j, 60.0 * 600, 60.0 * 600 * 0.01);
}

TEST(PodDimension, NamespacesGatherTheirPods) {
  const AccountReport r = cluster();
  const GroupRow* ml = row(r, Dimension::kNamespace, "ml");
  const GroupRow* infer = row(r, Dimension::kNamespace, "infer");
  ASSERT_TRUE(ml && infer);
  EXPECT_NEAR(ml->usage.held_s, 600, 1e-6);
  EXPECT_NEAR(infer->usage.held_s, 600, 1e-6);
  EXPECT_STREQ(dimension_name(Dimension::kPod), "pod");
  EXPECT_STREQ(dimension_name(Dimension::kNamespace), "namespace");
}

}  // namespace
}  // namespace gd::accounting
