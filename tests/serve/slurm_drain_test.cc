// serve's drain with brakes (slurm_drain.h) against a fake Slurm, and the
// scontrol output parser. The real Slurm: tests/e2e/test_slurm.py.
#include "serve/slurm_drain.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "serve/slurm_api.h"
#include "serve/slurm_node.h"

namespace gd {
namespace {

// A node as slurmctld keeps it; counts the calls.
class FakeSlurm : public SlurmNodeControl {
 public:
  std::string state = "IDLE";
  std::string reason;
  bool reachable = true;
  int shows = 0, drains = 0, resumes = 0;

  std::optional<SlurmNodeState> show(const std::string& node,
                                     std::string* error) override {
    EXPECT_EQ(node, "gpu01");
    ++shows;
    if (!reachable) {
      *error = "scontrol show node timed out after 10 s";
      return std::nullopt;
    }
    std::string line =
        "NodeName=gpu01 Arch=x86_64 State=" + state + " Partitions=gpu";
    if (!reason.empty())
      line += " Reason=" + reason + " [root@2026-12-02T06:01:45]";
    return parse_slurm_node(line);
  }
  bool drain(const std::string&, const std::string& r,
             std::string* error) override {
    ++drains;
    if (!reachable) {
      *error = "down";
      return false;
    }
    state = "IDLE+DRAIN";
    reason = r;
    return true;
  }
  bool resume(const std::string&, std::string*) override {
    ++resumes;
    state = "IDLE";
    reason.clear();
    return true;
  }
};

SlurmDrainCandidate xid79(const std::string& when = "06:10:11") {
  return {"xid-error:2", "xid-error",
          "gpudoctor: GPU 2 00000000:2C:00.0 Xid 79 (GPU has fallen off the "
          "bus) " +
              when};
}

struct Brakes : ::testing::Test {
  FakeSlurm slurm;
  SlurmDrainConfig config{"gpu01", 3600, false};
  std::vector<std::string> results(const std::vector<SlurmAction>& a) {
    std::vector<std::string> r;
    for (const auto& x : a) r.push_back(x.action + ":" + x.result);
    return r;
  }
};

using V = std::vector<std::string>;

TEST_F(Brakes, DrainsOnceWithTheReasonAndNotAgainWhileItStands) {
  SlurmDrainBrakes b(config, slurm);
  EXPECT_EQ(results(b.step(xid79(), 1000)), V{"drain:drained"});
  EXPECT_EQ(slurm.state, "IDLE+DRAIN");
  EXPECT_EQ(slurm.reason, xid79().reason);
  // The finding stays: no second drain, no call to Slurm at all.
  const int shows = slurm.shows;
  for (double t = 1005; t < 2000; t += 5)
    EXPECT_TRUE(b.step(xid79(), t).empty());
  EXPECT_EQ(slurm.shows, shows);
  EXPECT_EQ(slurm.drains, 1);
  EXPECT_EQ(b.drains().at("drained"), 1u);
}

TEST_F(Brakes, ASecondFindingWithinThePeriodDoesNotDrainAgain) {
  SlurmDrainBrakes b(config, slurm);
  b.step(xid79(), 1000);
  // An operator resumes the node; the finding clears, then a new one comes.
  slurm.state = "IDLE";
  slurm.reason.clear();
  // The finding clears; resume is off: reported, nothing done.
  EXPECT_EQ(results(b.step(std::nullopt, 1100)), V{"resume:not_enabled"});
  SlurmDrainCandidate ecc{"ecc-uncorrectable:3", "ecc-uncorrectable",
                          "gpudoctor: GPU 3 ... uncorrectable ECC errors"};
  EXPECT_EQ(results(b.step(ecc, 1200)), V{"drain:rate_limited"});
  EXPECT_TRUE(b.step(ecc, 1205).empty());  // reported once
  EXPECT_EQ(slurm.drains, 1);
  EXPECT_EQ(slurm.state, "IDLE");
  // After the period: drained again.
  EXPECT_EQ(results(b.step(ecc, 1000 + 3600)), V{"drain:drained"});
  EXPECT_EQ(slurm.reason, ecc.reason);
}

TEST_F(Brakes, PastThePeriodSlurmIsAskedAtMostOnceAMinute) {
  SlurmDrainBrakes b(config, slurm);
  b.step(xid79(), 1000);
  const int shows = slurm.shows;
  for (double t = 4600; t < 4720; t += 5)
    EXPECT_TRUE(b.step(xid79(), t).empty());
  EXPECT_EQ(slurm.shows - shows, 2);  // at 4600 and 4660
  EXPECT_EQ(slurm.drains, 1);
}

TEST_F(Brakes, ANodeDrainedOrDownForAnotherReasonIsLeftAlone) {
  for (const char* state : {"IDLE+DRAIN", "MIXED+DRAIN", "DOWN*", "DOWN+DRAIN",
                            "IDLE+MAINT", "IDLE*", "UNKNOWN"}) {
    FakeSlurm s;
    s.state = state;
    s.reason = "operator: fan swap";
    SlurmDrainBrakes b(config, s);
    EXPECT_EQ(results(b.step(xid79(), 1000)), V{"drain:already_unavailable"})
        << state;
    EXPECT_TRUE(b.step(xid79(), 1005).empty());  // once
    EXPECT_EQ(s.drains, 0) << state;
    EXPECT_EQ(s.reason, "operator: fan swap");
    EXPECT_FALSE(b.own_reason());
  }
}

TEST_F(Brakes, AReasonSomeoneElseSetIsNeverReplaced) {
  slurm.reason = "site health check: IB down";  // up, but with a reason
  SlurmDrainBrakes b(config, slurm);
  EXPECT_EQ(results(b.step(xid79(), 1000)), V{"drain:reason_set_by_other"});
  EXPECT_EQ(slurm.drains, 0);
}

TEST_F(Brakes, ResumesOnlyItsOwnDrainOnlyWhenClearedOnlyWhenOptedIn) {
  config.resume = true;
  SlurmDrainBrakes b(config, slurm);
  b.step(xid79(), 1000);
  EXPECT_TRUE(b.step(xid79(), 1005).empty());  // still present: no resume
  EXPECT_EQ(results(b.step(std::nullopt, 1010)), V{"resume:resumed"});
  EXPECT_EQ(slurm.state, "IDLE");
  EXPECT_EQ(slurm.resumes, 1);
  EXPECT_FALSE(b.own_reason());
}

TEST_F(Brakes, WithoutTheOptInTheNodeStaysDrained) {
  SlurmDrainBrakes b(config, slurm);
  b.step(xid79(), 1000);
  EXPECT_EQ(results(b.step(std::nullopt, 1010)), V{"resume:not_enabled"});
  EXPECT_TRUE(b.step(std::nullopt, 1015).empty());
  EXPECT_EQ(slurm.resumes, 0);
  EXPECT_EQ(slurm.state, "IDLE+DRAIN");
}

TEST_F(Brakes, ADrainWhoseReasonAnOperatorChangedIsNotResumed) {
  config.resume = true;
  SlurmDrainBrakes b(config, slurm);
  b.step(xid79(), 1000);
  slurm.reason = "operator: keep drained, RMA 1234";
  EXPECT_EQ(results(b.step(std::nullopt, 1010)), V{"resume:not_ours"});
  EXPECT_EQ(slurm.resumes, 0);
  EXPECT_EQ(slurm.reason, "operator: keep drained, RMA 1234");
  // Nor later: serve no longer owns a drain.
  EXPECT_TRUE(b.step(std::nullopt, 1020).empty());
}

TEST_F(Brakes, AGpudoctorReasonServeDidNotRecordIsNotResumed) {
  // E.g. the prolog drained with the same words, or a restarted serve.
  config.resume = true;
  slurm.state = "IDLE+DRAIN";
  slurm.reason = xid79().reason;
  SlurmDrainBrakes b(config, slurm);
  EXPECT_EQ(results(b.step(xid79(), 1000)), V{"drain:already_unavailable"});
  EXPECT_TRUE(b.step(std::nullopt, 1010).empty());
  EXPECT_EQ(slurm.resumes, 0);
}

TEST_F(Brakes, AnUnreachableSlurmctldFailsOnceAndIsRetried) {
  slurm.reachable = false;
  SlurmDrainBrakes b(config, slurm);
  auto a = b.step(xid79(), 1000);
  ASSERT_EQ(results(a), V{"drain:failed"});
  EXPECT_NE(a[0].detail.find("timed out"), std::string::npos);
  EXPECT_TRUE(b.step(xid79(), 1005).empty());  // the same failure, once
  slurm.reachable = true;
  EXPECT_EQ(results(b.step(xid79(), 1010)), V{"drain:drained"});
}

TEST_F(Brakes, ActionsAreBounded) {
  SlurmDrainBrakes b({"gpu01", 1, true}, slurm);
  for (int i = 0; i < 500; ++i) {
    b.step(xid79(), 1000 + 10 * i);
    b.step(std::nullopt, 1005 + 10 * i);
  }
  EXPECT_EQ(b.actions().size(), SlurmDrainBrakes::kKeptActions);
  EXPECT_EQ(b.drains().at("drained"), 500u);
  EXPECT_EQ(b.resumes().at("resumed"), 500u);
}

TEST(SlurmDrainCandidate, PicksTheTableOrderAndWritesTheReason) {
  TraceHeader h;
  for (int i = 0; i < 4; ++i) {
    GpuInfo g;
    g.index = i;
    g.pci_bus_id = "00000000:0" + std::to_string(i) + ":00.0";
    h.gpus.push_back(g);
  }
  std::vector<Finding> f;
  f.push_back({"thermal-throttling", "warning", {0}, {}, "hot", "", "", 0, 0});
  EXPECT_FALSE(slurm_drain_candidate(f, h));
  f.push_back({"nvlink-degraded", "warning", {1}, {}, "link", "", "", 0, 0});
  EXPECT_FALSE(slurm_drain_candidate(f, h));  // not critical
  f.push_back({"gpu-lost",
               "critical",
               {3},
               {},
               "GPU 3 fell off",
               "",
               "",
               1796191811,
               0});
  f.push_back({"xid-error",
               "critical",
               {2},
               {},
               "GPU 2 (NVIDIA A100, 00000000:02:00.0) logged Xid 79 (GPU has "
               "fallen off the bus): reset",
               "",
               "",
               1796191811,
               0});
  auto c = slurm_drain_candidate(f, h);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->id, "xid-error");
  EXPECT_EQ(c->reason,
            "gpudoctor: GPU 2 00000000:02:00.0 Xid 79: the driver can no "
            "longer reach the GPU over PCIe (it fell off the bus) 06:10:11");
  f.erase(f.begin() + 3);
  c = slurm_drain_candidate(f, h);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->reason,
            "gpudoctor: GPU 3 00000000:03:00.0 fell off the bus 06:10:11");
}

TEST(SlurmDrainCandidate, HostileTextMakesACleanBoundedReason) {
  TraceHeader h;
  GpuInfo g;
  g.index = 0;
  g.pci_bus_id = "0000:07:00.0\x1b[2J\n" + std::string(1000, 'y');
  h.gpus.push_back(g);
  std::vector<Finding> f{
      {"gpu-lost", "critical", {0}, {}, "t", "", "", 1796191811, 0}};
  auto c = slurm_drain_candidate(f, h);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->reason.size(), kSlurmReasonMax);
  for (char ch : c->reason) EXPECT_TRUE(ch >= 0x20 && ch <= 0x7e) << int(ch);
  EXPECT_EQ(c->reason.rfind("gpudoctor: GPU 0 0000:07:00.0?[2J?yyy", 0), 0u)
      << c->reason;
  EXPECT_EQ(c->reason.substr(c->reason.size() - 9), " 06:10:11");
  // An Xid the catalogue does not know: its code alone.
  f = {{"xid-error",
        "critical",
        {},
        {},
        "GPU 0 logged Xid 99999 (x)",
        "",
        "",
        0,
        0}};
  c = slurm_drain_candidate(f, h);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->reason, "gpudoctor: host Xid 99999");
}

TEST(ParseSlurmNode, StateAndReasonWithSpacesAndEquals) {
  auto s = parse_slurm_node(
      "NodeName=gdnode Arch=x86_64 CoresPerSocket=1  CPUAlloc=0 "
      "State=IDLE+DRAIN ThreadsPerCore=1 ExtSensorsTemp=n/s Reason=operator "
      "says: x=1 maintenance [root@2026-12-02T06:01:45]\n");
  EXPECT_EQ(s.state, "IDLE+DRAIN");
  EXPECT_EQ(s.reason, "operator says: x=1 maintenance");
  EXPECT_TRUE(s.drain);
  EXPECT_TRUE(s.unavailable);
  s = parse_slurm_node("NodeName=gdnode State=MIXED Partitions=gpu");
  EXPECT_FALSE(s.unavailable);
  EXPECT_EQ(s.reason, "");
  EXPECT_TRUE(parse_slurm_node("NodeName=n State=ALLOCATED*").unavailable);
  EXPECT_THROW(parse_slurm_node("Node gdnode not found"),
               std::invalid_argument);
  EXPECT_THROW(parse_slurm_node("NodeName=n Arch=x"), std::invalid_argument);
}

// The real program path with a fake scontrol (a script): arguments, a
// non-zero exit, a hang.
class FakeScontrol : public ::testing::Test {
 protected:
  std::string dir, script, log;
  void SetUp() override {
    char tmpl[] = "/tmp/gd_scontrol_XXXXXX";
    dir = mkdtemp(tmpl);
    script = dir + "/scontrol";
    log = dir + "/calls";
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
  void write(const std::string& body) {
    std::ofstream(script) << "#!/bin/sh\necho \"$@\" >> " << log << "\n"
                          << body;
    chmod(script.c_str(), 0755);
  }
  std::string calls() {
    std::ifstream in(log);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
};

TEST_F(FakeScontrol, ShowDrainAndResumeCallScontrolWithTheNodeAndReason) {
  write("echo 'NodeName=gpu01 State=IDLE Partitions=gpu'\n");
  ScontrolNodeControl c(script, 5);
  std::string error;
  auto s = c.show("gpu01", &error);
  ASSERT_TRUE(s) << error;
  EXPECT_EQ(s->state, "IDLE");
  EXPECT_TRUE(c.drain("gpu01", "gpudoctor: GPU 2 Xid 79 06:10:11", &error));
  EXPECT_TRUE(c.resume("gpu01", &error));
  EXPECT_EQ(calls(),
            "show node -o gpu01\n"
            "update nodename=gpu01 state=drain reason=gpudoctor: GPU 2 Xid 79 "
            "06:10:11\n"
            "update nodename=gpu01 state=resume\n");
}

TEST_F(FakeScontrol, FailuresAndHangsBecomeErrors) {
  write(
      "echo 'slurm_load_node error: Unable to contact slurm controller' >&2; "
      "exit 1\n");
  ScontrolNodeControl c(script, 5);
  std::string error;
  EXPECT_FALSE(c.show("gpu01", &error));
  EXPECT_EQ(error,
            "scontrol show node exited 1: slurm_load_node error: Unable to "
            "contact slurm controller");
  write("sleep 30\n");
  ScontrolNodeControl slow(script, 0.2);
  EXPECT_FALSE(slow.drain("gpu01", "r", &error));
  EXPECT_EQ(error, "scontrol update timed out after 0.2 s");
  ScontrolNodeControl missing(dir + "/none", 1);
  EXPECT_FALSE(missing.show("gpu01", &error));
  EXPECT_NE(error.find("cannot run"), std::string::npos);
}

TEST(SlurmApi, MetricsAndActions) {
  SlurmDrainStatus s;
  s.config = {"gpu01", 3600, false};
  s.drains["drained"] = 1;
  s.own_reason = "gpudoctor: GPU 2 Xid 79";
  s.actions.push_back({1000, "drain", "drained", "xid-error",
                       "gpudoctor: GPU 2 Xid 79", "State=IDLE"});
  std::string page;
  render_slurm_families(s, "", page);
  EXPECT_NE(page.find("gpudoctor_slurm_drains_total{result=\"drained\"} 1\n"),
            std::string::npos)
      << page;
  EXPECT_NE(
      page.find("gpudoctor_slurm_drains_total{result=\"rate_limited\"} 0\n"),
      std::string::npos);
  EXPECT_NE(page.find("gpudoctor_slurm_drained_by_gpudoctor 1\n"),
            std::string::npos);
  page.clear();
  render_slurm_families(s, "gpu01", page);
  EXPECT_NE(
      page.find("gpudoctor_slurm_drained_by_gpudoctor{Hostname=\"gpu01\"} 1\n"),
      std::string::npos)
      << page;
  auto r = api_slurm_actions(&s);
  EXPECT_EQ(r.status, 200);
  EXPECT_NE(r.body.find("\"result\":\"drained\""), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("\"node\":\"gpu01\""), std::string::npos);
  EXPECT_EQ(api_slurm_actions(nullptr).body, "{\"enabled\":false}");
}

}  // namespace
}  // namespace gd
