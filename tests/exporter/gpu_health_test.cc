// Each GPU's health from the latest collection and the firing findings:
// the one judgement /api/v1/health and gpudoctor_gpu_health both show.
#include "exporter/gpu_health.h"

#include <gtest/gtest.h>

#include <map>

namespace gd {
namespace {

struct Node {
  TraceHeader header;
  Sample sample;
  MetricsInput in;

  explicit Node(int gpus) {
    for (int i = 0; i < gpus; ++i) {
      GpuInfo info;
      info.index = i;
      info.uuid = "GPU-" + std::to_string(i);
      header.gpus.push_back(info);
      GpuSample g;
      g.index = i;
      g.recovery_action = kRecoveryNone;
      sample.gpus.push_back(g);
    }
    sample.t = 1000;
    in.header = &header;
    in.sample = &sample;
    in.evaluated = true;
  }
  void fire(const std::string& id, const std::string& severity,
            std::vector<int> gpus, const std::string& state = "firing") {
    in.findings.push_back({id, severity, std::move(gpus), state});
  }
  std::map<int, std::string> states() const {
    std::map<int, std::string> out;
    for (const auto& v : node_health(in).gpus) out[v.gpu] = v.state;
    return out;
  }
};

TEST(GpuHealth, FiringFindingsAndRecoveryActionsJudgeEachGpu) {
  Node n(6);
  n.fire("xid-error", "critical", {1});
  n.fire("thermal-throttling", "warning", {2});
  n.fire("thermal-throttling", "warning", {3}, "pending");  // not yet held
  n.fire("gpu-idle-allocated", "info", {4});                // advice only
  n.sample.gpus[5].recovery_action = kRecoveryGpuReset;
  n.fire("host-swapping", "warning", {});  // the host: no GPU's fault
  EXPECT_EQ(n.states(), (std::map<int, std::string>{{0, kGpuHealthy},
                                                    {1, kGpuUnhealthy},
                                                    {2, kGpuDegraded},
                                                    {3, kGpuHealthy},
                                                    {4, kGpuHealthy},
                                                    {5, kGpuUnhealthy}}));
  const NodeHealth h = node_health(n.in);
  EXPECT_EQ(h.gpus[1].reason, "critical: xid-error");
  EXPECT_EQ(h.gpus[1].findings, std::vector<std::string>{"xid-error"});
  EXPECT_EQ(h.gpus[5].reason, "NVML asks for gpu_reset");
  EXPECT_EQ(h.gpus[5].recovery_action, "gpu_reset");
  EXPECT_EQ(h.gpus[0].reason, "");
  EXPECT_EQ(h.host_findings, std::vector<std::string>{"host-swapping"});
}

TEST(GpuHealth, NeverHealthyWithoutEvidence) {
  Node n(3);
  n.sample.gpus[1].stale = true;
  n.sample.gpus[2].lost = true;
  EXPECT_EQ(n.states(),
            (std::map<int, std::string>{
                {0, kGpuHealthy}, {1, kGpuHealthUnknown}, {2, kGpuUnhealthy}}));
  n.in.evaluated = false;  // serve's alerting has not run yet
  EXPECT_EQ(n.states().at(0), kGpuHealthUnknown);
  EXPECT_EQ(node_health(n.in).gpus[0].reason,
            "the findings are not evaluated yet");
  n.in.sample = nullptr;  // before the first sample
  for (const auto& [gpu, state] : n.states())
    EXPECT_EQ(state, kGpuHealthUnknown) << gpu;
}

TEST(GpuHealth, TheMetricHasOneSeriesPerStateAndOneIsSet) {
  Node n(2);
  n.fire("gpu-lost", "critical", {1});
  std::string out;
  render_gpu_health_family(n.in, out);
  EXPECT_NE(out.find("gpudoctor_gpu_health{gpu=\"0\",UUID=\"GPU-0\","
                     "state=\"healthy\"} 1"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("gpudoctor_gpu_health{gpu=\"1\",UUID=\"GPU-1\","
                     "state=\"unhealthy\"} 1"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("gpudoctor_gpu_health{gpu=\"1\",UUID=\"GPU-1\","
                     "state=\"healthy\"} 0"),
            std::string::npos)
      << out;
}

}  // namespace
}  // namespace gd
