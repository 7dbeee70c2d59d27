// cpu-contention names the other work from host.other_cpu_top, and never an
// ancestor of the GPU job (issue 25: it said "start with pid N (bash)", the
// shell that had launched the job, while 48 unrelated processes took the
// CPUs).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "diagnose/engine.h"
#include "diagnose/rule.h"
#include "tracegen/tracegen.h"

namespace gd::test {
namespace {

class VectorSource : public SampleSource {
 public:
  explicit VectorSource(std::vector<Sample> s) : samples_(std::move(s)) {}
  bool next(Sample& out) override {
    if (i_ == samples_.size()) return false;
    out = samples_[i_++];
    return true;
  }

 private:
  std::vector<Sample> samples_;
  size_t i_ = 0;
};

const Finding* contention(const DiagnoseResult& r) {
  for (const Finding& f : r.findings)
    if (f.id == "cpu-contention") return &f;
  return nullptr;
}

DiagnoseResult run(const TraceHeader& h, std::vector<Sample> samples) {
  VectorSource src(std::move(samples));
  return diagnose(h, src, DiagnoseOptions{});
}

std::vector<Sample> generate(const std::string& scenario, TraceHeader& h) {
  tracegen::Options o;
  o.gpus = 1;
  o.duration_s = 300;
  return tracegen::generate_all(scenario, o, &h);
}

constexpr uint32_t kShell = 6900;  // tracegen's shell the job started from

bool names_pid(const Finding& f, uint32_t pid) {
  return std::find(f.pids.begin(), f.pids.end(), pid) != f.pids.end();
}

TEST(CpuContentionOtherWork, NamesTheBusyUnrelatedProcessesNotTheShell) {
  TraceHeader h;
  auto samples = generate("cpu-contention-other-work", h);
  const DiagnoseResult r = run(h, samples);
  const Finding* f = contention(r);
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->evidence.find("(yes, bob) 3"), std::string::npos) << f->evidence;
  // 48 processes share the CPUs: three are named, the rest counted.
  EXPECT_NE(f->evidence.find(" more)"), std::string::npos) << f->evidence;
  EXPECT_NE(f->action.find("start with pid 51"), std::string::npos)
      << f->action;
  EXPECT_EQ(f->evidence.find("bash"), std::string::npos) << f->evidence;
  EXPECT_EQ(f->action.find("bash"), std::string::npos) << f->action;
  EXPECT_FALSE(names_pid(*f, kShell));
}

TEST(CpuContentionOtherWork, WithoutTheFieldSaysSoAndDoesNotBlameTheShell) {
  TraceHeader h;
  auto samples = generate("cpu-contention-unrecorded", h);
  const DiagnoseResult r = run(h, samples);
  const Finding* f = contention(r);
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->evidence.find("which processes is not recorded in this trace"),
            std::string::npos)
      << f->evidence;
  EXPECT_EQ(f->evidence.find("bash"), std::string::npos) << f->evidence;
  EXPECT_EQ(f->action.find("start with"), std::string::npos) << f->action;
  EXPECT_FALSE(names_pid(*f, kShell));
}

TEST(CpuContentionOtherWork, AnAncestorInTheListIsStillNotOtherWork) {
  // A hand-written (or older collector's) list that names the job's shell:
  // the rule checks against the job's tree too.
  TraceHeader h;
  auto samples = generate("cpu-contention-other-work", h);
  for (Sample& s : samples) {
    ASSERT_TRUE(s.host.other_cpu_top.has_value());
    s.host.other_cpu_top->insert(s.host.other_cpu_top->begin(),
                                 {kShell, "bash", "alice", std::nullopt, 95});
    s.host.other_cpu_top->pop_back();
  }
  const DiagnoseResult r = run(h, samples);
  const Finding* f = contention(r);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->evidence.find("bash"), std::string::npos) << f->evidence;
  EXPECT_FALSE(names_pid(*f, kShell));
  EXPECT_NE(f->action.find("start with pid 51"), std::string::npos)
      << f->action;
}

TEST(CpuContentionOtherWork, AProcessUsingLittleCpuIsNotNamed) {
  TraceHeader h;
  auto samples = generate("cpu-contention-other-work", h);
  for (Sample& s : samples)
    for (OtherCpuProcess& p : *s.host.other_cpu_top) p.cpu_pct = 4;
  const DiagnoseResult r = run(h, samples);
  const Finding* f = contention(r);
  ASSERT_NE(f, nullptr) << "the host is still saturated by others";
  EXPECT_EQ(f->evidence.find("(yes, bob)"), std::string::npos) << f->evidence;
  EXPECT_EQ(f->action.find("start with"), std::string::npos) << f->action;
  // Looked, and nobody stood out: not "not recorded".
  EXPECT_EQ(f->evidence.find("not recorded"), std::string::npos) << f->evidence;
}

}  // namespace
}  // namespace gd::test
