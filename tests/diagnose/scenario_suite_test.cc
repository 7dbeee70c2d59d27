// The scenario suite: every tracegen scenario, on its minimum GPU count and
// on 4 GPUs, through the whole engine. Each must raise every finding its
// table row says it fires and none that the row says must not fire
// (findings.md's "must not fire" column). The catalogue test checks that
// every id of findings.md fires in some scenario and is checked silent in
// another, so a new rule cannot go untested.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>

#include "diagnose/engine.h"
#include "diagnose/rule.h"
#include "tracegen/tracegen.h"

namespace gd::test {
namespace {

// Streams a scenario straight from the generator into the engine.
class GeneratorSource : public SampleSource {
 public:
  explicit GeneratorSource(tracegen::Generator& gen) : gen_(gen) {}
  bool next(Sample& out) override { return gen_.next(out); }

 private:
  tracegen::Generator& gen_;
};

// 10 minutes at 1 Hz: past every rule's minimum window (memory-leak wants
// 5 min of growth) and cheap enough to run 2 x ~45 scenarios.
constexpr double kDurationS = 600;

DiagnoseResult run_scenario(const std::string& name, int gpus,
                            TraceHeader* header = nullptr, uint64_t seed = 1) {
  tracegen::Options opt;
  opt.gpus = gpus;
  opt.duration_s = kDurationS;
  opt.seed = seed;
  tracegen::Generator gen(name, opt);
  if (header) *header = gen.header();
  GeneratorSource source(gen);
  return diagnose(gen.header(), source, DiagnoseOptions{});
}

std::vector<const Finding*> pointers_with_id(const DiagnoseResult& r,
                                             const std::string& id) {
  std::vector<const Finding*> out;
  for (const Finding& f : r.findings)
    if (f.id == id) out.push_back(&f);
  return out;
}

std::string ids_of(const DiagnoseResult& r) {
  std::string out;
  for (const Finding& f : r.findings) out += (out.empty() ? "" : ", ") + f.id;
  return out.empty() ? "(none)" : out;
}

// Evidence must carry numbers and a time range (findings.md: "the metric
// values and time range that triggered it, in words and numbers").
bool has_digit(const std::string& s) {
  return std::any_of(s.begin(), s.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

struct Case {
  std::string scenario;
  int gpus;
};

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (const auto& s : tracegen::scenarios()) {
    cases.push_back({s.name, s.min_gpus});
    if (s.min_gpus < 4) cases.push_back({s.name, 4});
  }
  return cases;
}

class ScenarioSuite : public ::testing::TestWithParam<Case> {};

TEST_P(ScenarioSuite, FiresWhatItMustAndNothingItMustNot) {
  const Case& c = GetParam();
  const tracegen::ScenarioInfo* info = tracegen::find_scenario(c.scenario);
  ASSERT_NE(info, nullptr);
  TraceHeader header;
  DiagnoseResult r = run_scenario(c.scenario, c.gpus, &header);
  EXPECT_GT(r.window.samples, 0u);
  for (const std::string& id : info->fires)
    EXPECT_FALSE(pointers_with_id(r, id).empty())
        << c.scenario << " on " << c.gpus << " GPUs must raise " << id
        << "; got " << ids_of(r);
  for (const std::string& id : info->silent)
    for (const Finding* f : pointers_with_id(r, id))
      ADD_FAILURE() << c.scenario << " on " << c.gpus << " GPUs must not raise "
                    << id << ": " << f->title << " -- " << f->evidence;

  for (const Finding& f : r.findings) {
    SCOPED_TRACE(c.scenario + " / " + f.id);
    EXPECT_FALSE(f.title.empty());
    EXPECT_EQ(f.title.find('\n'), std::string::npos) << "title is one line";
    EXPECT_TRUE(has_digit(f.evidence)) << f.evidence;
    EXPECT_FALSE(f.action.empty());
    EXPECT_TRUE(f.severity == "critical" || f.severity == "warning" ||
                f.severity == "info");
    for (int g : f.gpus) EXPECT_TRUE(g >= 0 && g < c.gpus) << "gpu " << g;
    // Findings drawn from samples carry their time range and say it; the
    // two drawn from the header (settings read once at start) need not.
    bool from_header =
        f.id == "persistence-mode-off" || f.id == "nvml-driver-mismatch";
    if (f.end > 0 && !from_header) {
      EXPECT_LE(f.start, f.end);
      EXPECT_GE(f.start, r.window.start);
      EXPECT_LE(f.end, r.window.end);
      EXPECT_NE(f.evidence.find("UTC"), std::string::npos)
          << "a finding with a time range says it: " << f.evidence;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllScenarios, ScenarioSuite,
                         ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<Case>& p) {
                           std::string name = p.param.scenario + "_" +
                                              std::to_string(p.param.gpus) +
                                              "gpu";
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

// ---- the catalogue against findings.md ------------------------------------

// Ids of a catalogue table: rows that start with | `id` |; with
// `last_column`, only the rows whose last column says that.
std::set<std::string> table_ids(const std::string& path,
                                const std::string& last_column = "") {
  std::set<std::string> ids;
  std::ifstream in(path);
  std::regex row(R"(^\| `([a-z0-9-]+)` \|)");
  std::string line;
  std::smatch m;
  while (std::getline(in, line))
    if (std::regex_search(line, m, row) &&
        (last_column.empty() || line.ends_with("| " + last_column + " |")))
      ids.insert(m[1]);
  return ids;
}

std::set<std::string> findings_md_ids() {
  return table_ids(std::string(GD_SHARED_DIR) + "/findings.md");
}

// Ids the project's own docs/findings.md marks as planned (no rule yet).
std::set<std::string> planned_ids() {
  return table_ids(GD_DOCS_DIR "/findings.md", "planned");
}

// Every id of findings.md either has a rule, which fires in some scenario and
// is checked silent in another, or is marked planned in docs/findings.md (the
// contract may name ids before their rules exist).
TEST(ScenarioCatalogue,
     EveryFindingIdFiresSomewhereAndIsCheckedSilentSomewhere) {
  std::string path = std::string(GD_SHARED_DIR) + "/findings.md";
  ASSERT_TRUE(std::filesystem::exists(path)) << path << " is absent";
  std::set<std::string> ids = findings_md_ids();
  ASSERT_GE(ids.size(), 20u) << "could not read the id table of " << path;
  std::set<std::string> planned = planned_ids();
  std::set<std::string> implemented;
  for (const RuleEntry& e : rule_table()) implemented.insert(e.id);
  std::set<std::string> fired, silenced;
  for (const auto& s : tracegen::scenarios()) {
    fired.insert(s.fires.begin(), s.fires.end());
    silenced.insert(s.silent.begin(), s.silent.end());
  }
  for (const std::string& id : ids) {
    if (!implemented.contains(id)) {
      EXPECT_TRUE(planned.contains(id))
          << id << " has no rule and is not marked planned in docs/findings.md";
      continue;
    }
    EXPECT_FALSE(planned.contains(id))
        << id << " has a rule but docs/findings.md says planned";
    EXPECT_TRUE(fired.contains(id)) << id << " fires in no scenario";
    EXPECT_TRUE(silenced.contains(id))
        << id << " is checked silent in no scenario";
  }
  // Every rule has a catalogue id, and ids the scenario table names exist (a
  // typo would check nothing).
  for (const std::string& id : implemented) EXPECT_TRUE(ids.contains(id)) << id;
  for (const std::string& id : fired) EXPECT_TRUE(ids.contains(id)) << id;
  for (const std::string& id : silenced) EXPECT_TRUE(ids.contains(id)) << id;
}

TEST(ScenarioCatalogue, NoScenarioBothFiresAndSilencesAnId) {
  for (const auto& s : tracegen::scenarios())
    for (const std::string& id : s.fires)
      EXPECT_EQ(std::count(s.silent.begin(), s.silent.end(), id), 0)
          << s.name << " " << id;
}

// ---- what the findings say, for the scenarios that pin it down ----------

TEST(ScenarioFindings, LostGpuMidTraceNamesTheLastGpuAndStallsNothingElse) {
  DiagnoseResult r = run_scenario("gpu-lost", 4);
  auto lost = pointers_with_id(r, "gpu-lost");
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_EQ(lost[0]->gpus, std::vector<int>{3});
  EXPECT_EQ(lost[0]->severity, "critical");
  // Lost half-way: from 08:05:00 (300 s into the 10 min window).
  EXPECT_DOUBLE_EQ(lost[0]->start, r.window.start + 300);
  auto xid = pointers_with_id(r, "xid-error");
  ASSERT_EQ(xid.size(), 1u);
  EXPECT_NE(xid[0]->evidence.find("79"), std::string::npos);
  EXPECT_EQ(diagnose_exit_code(r), 2);
}

TEST(ScenarioFindings, RowRemapAfterCorrectableErrorsIsAPendingRemapWarning) {
  DiagnoseResult r = run_scenario("xid-remap-pending", 2);
  auto xid = pointers_with_id(r, "xid-error");
  ASSERT_EQ(xid.size(), 1u) << ids_of(r);
  EXPECT_EQ(xid[0]->severity, "warning");
  EXPECT_EQ(xid[0]->gpus, std::vector<int>{0});
  EXPECT_NE(xid[0]->action.find("to apply the remap, when it is drained"),
            std::string::npos)
      << xid[0]->action;
  EXPECT_EQ(diagnose_exit_code(r), 1);
}

TEST(ScenarioFindings, GspTimeoutsOnEveryGpuBlameTheDriverNotEachGpu) {
  DiagnoseResult r = run_scenario("xid-gsp-several", 4);
  auto xid = pointers_with_id(r, "xid-error");
  ASSERT_EQ(xid.size(), 4u) << ids_of(r);
  for (const Finding* f : xid) {
    EXPECT_NE(f->action.find("Several GPUs, one driver: update the driver"),
              std::string::npos)
        << f->action;
    EXPECT_NE(f->evidence.find("on 4 GPUs"), std::string::npos) << f->evidence;
  }
  // The look-alike: one GPU's GSP timeout keeps the per-GPU advice.
  DiagnoseResult one = run_scenario("xid-events", 4);
  for (const Finding* f : pointers_with_id(one, "xid-error"))
    EXPECT_EQ(f->action.find("Several GPUs"), std::string::npos) << f->action;
}

TEST(ScenarioFindings, DdpLaunchersGroupTheRanksIntoOneJob) {
  // Launcher pid 8000; deepspeed's inner launcher is 8001. Ranks follow.
  const std::map<std::string, uint32_t> group_pid = {
      {"ddp-imbalance", 8000},
      {"ddp-imbalance-mpirun", 8000},
      {"ddp-imbalance-deepspeed", 8001},
      {"ddp-imbalance-accelerate", 8000},
      {"ddp-imbalance-srun", 8000},
      {"ddp-imbalance-hidden-launcher", 8000}};
  for (const auto& [scenario, group] : group_pid) {
    SCOPED_TRACE(scenario);
    DiagnoseResult r = run_scenario(scenario, 4);
    auto f = pointers_with_id(r, "gpu-imbalance");
    ASSERT_EQ(f.size(), 1u) << ids_of(r);
    EXPECT_EQ(f[0]->gpus, (std::vector<int>{0, 1, 2, 3}));
    ASSERT_FALSE(f[0]->pids.empty());
    EXPECT_EQ(f[0]->pids.front(), group);
    EXPECT_EQ(f[0]->pids.size(), 5u) << "the group and its 4 ranks";
    EXPECT_NE(f[0]->evidence.find("4 ranks"), std::string::npos)
        << f[0]->evidence;
    EXPECT_NE(f[0]->action.find("GPU 0 carries more work"), std::string::npos)
        << f[0]->action;
  }
}

TEST(ScenarioFindings, InputBoundNamesTheRankItsWorkersAndTheCycle) {
  DiagnoseResult r = run_scenario("input-bound", 1);
  auto f = pointers_with_id(r, "input-bound");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0]->gpus, std::vector<int>{0});
  EXPECT_EQ(f[0]->pids, std::vector<uint32_t>{8000});
  EXPECT_EQ(f[0]->title, "GPU 0 is held back by its data loader");
  // 3 s busy / 2 s starved: 40% of samples, a 5 s cycle, 6 workers at 99%.
  EXPECT_NE(f[0]->evidence.find("in 40% of 600 samples"), std::string::npos)
      << f[0]->evidence;
  EXPECT_NE(f[0]->evidence.find("~5.0 s cycle"), std::string::npos)
      << f[0]->evidence;
  EXPECT_NE(f[0]->evidence.find(
                "pid 8000 (python, alice) and its 6 workers used 99% CPU each"),
            std::string::npos)
      << f[0]->evidence;
  // The job alone saturates the host: more workers cannot help.
  EXPECT_NE(f[0]->action.find("no idle CPU"), std::string::npos)
      << f[0]->action;
  EXPECT_EQ(pointers_with_id(r, "cpu-contention").size(), 0u);
}

TEST(ScenarioFindings, InputBoundDdpJobIsOneFindingListingEveryRank) {
  DiagnoseResult r = run_scenario("input-bound", 4);
  auto f = pointers_with_id(r, "input-bound");
  ASSERT_EQ(f.size(), 1u) << "one job, one finding";
  EXPECT_EQ(f[0]->gpus, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(f[0]->pids, (std::vector<uint32_t>{8001, 8002, 8003, 8004}));
  EXPECT_NE(
      f[0]->evidence.find(
          "its 4 ranks (pids 8001, 8002, 8003, 8004) and their 24 workers"),
      std::string::npos)
      << f[0]->evidence;
}

TEST(ScenarioFindings, InputBoundOscillationNamesTheCycleAndTheBusyWorkers) {
  // The real 8-GPU case: util 60-100% with 4 workers per GPU, all pegged,
  // fixed by more workers. Never below 30%, so "starved" alone missed it.
  DiagnoseResult r = run_scenario("input-bound-oscillating", 8);
  auto f = pointers_with_id(r, "input-bound");
  ASSERT_EQ(f.size(), 1u) << ids_of(r);
  EXPECT_EQ(f[0]->gpus, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(f[0]->pids.size(), 8u);
  EXPECT_EQ(f[0]->title,
            "GPUs 0, 1, 2, 3, 4, 5, 6, 7 are held back by their "
            "data loaders");
  const std::string& ev = f[0]->evidence;
  // 3 s at ~98%, 2 s at ~60%: a 5 s cycle, below 75% in 2 of every 5.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      ev, m,
      std::regex(
          R"(swung between ~(\d+)% and ~(\d+)% in a regular ~5\.0 s cycle)")))
      << ev;
  EXPECT_GE(std::stoi(m[1].str()), 95) << ev;
  EXPECT_GE(std::stoi(m[2].str()), 45) << ev;
  EXPECT_LE(std::stoi(m[2].str()), 65) << ev;
  EXPECT_NE(ev.find("below 75% in 40% of 4800 GPU samples"), std::string::npos)
      << ev;
  EXPECT_NE(ev.find("and their 32 workers used 99% CPU each"),
            std::string::npos)
      << ev;
  // 128 CPUs, ~40 busy: more workers per rank is the fix.
  EXPECT_NE(f[0]->action.find("raise DataLoader num_workers (now 4 per rank)"),
            std::string::npos)
      << f[0]->action;
  EXPECT_NE(f[0]->action.find("prefetch_factor"), std::string::npos);
  EXPECT_NE(f[0]->action.find("pin_memory=True"), std::string::npos);
  EXPECT_EQ(diagnose_exit_code(r), 1);
}

TEST(ScenarioFindings, InputBoundOscillationOnOneGpuNamesTheRankAndWorkers) {
  DiagnoseResult r = run_scenario("input-bound-oscillating", 1);
  auto f = pointers_with_id(r, "input-bound");
  ASSERT_EQ(f.size(), 1u) << ids_of(r);
  EXPECT_EQ(f[0]->pids, std::vector<uint32_t>{8000});
  EXPECT_NE(f[0]->evidence.find(
                "pid 8000 (python, alice) and its 4 workers used 99% CPU each"),
            std::string::npos)
      << f[0]->evidence;
  EXPECT_NE(f[0]->evidence.find("below 75% in 40% of 600 samples"),
            std::string::npos)
      << f[0]->evidence;
}

TEST(ScenarioFindings, SwapStormIsHostSwappingNotSlowStorage) {
  for (int gpus : {1, 4}) {
    DiagnoseResult r = run_scenario("swap-storm", gpus);
    EXPECT_TRUE(pointers_with_id(r, "io-bound").empty()) << ids_of(r);
    auto f = pointers_with_id(r, "host-swapping");
    ASSERT_EQ(f.size(), 1u) << ids_of(r);
    // The fix is less host memory, not faster storage.
    EXPECT_NE(f[0]->action.find("fewer or lighter DataLoader workers"),
              std::string::npos)
        << f[0]->action;
  }
}

TEST(ScenarioFindings, CpuContentionNamesTheOtherProcessNotTheJobsWorkers) {
  DiagnoseResult r = run_scenario("cpu-contention", 1);
  auto f = pointers_with_id(r, "cpu-contention");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NE(f[0]->evidence.find("pid 7777 (ffmpeg, bob)"), std::string::npos)
      << f[0]->evidence;
  EXPECT_NE(f[0]->action.find("pid 7777"), std::string::npos) << f[0]->action;
  EXPECT_EQ(f[0]->evidence.find("pt_data_worker"), std::string::npos)
      << f[0]->evidence;
}

TEST(ScenarioFindings, ZombieNamesTheParentThatMustReapIt) {
  DiagnoseResult r = run_scenario("zombie-memory", 2);
  auto f = pointers_with_id(r, "orphaned-memory");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0]->gpus, std::vector<int>{1});
  EXPECT_NE(std::find(f[0]->pids.begin(), f[0]->pids.end(), 9100u),
            f[0]->pids.end());
  EXPECT_NE(std::find(f[0]->pids.begin(), f[0]->pids.end(), 9000u),
            f[0]->pids.end());
  EXPECT_NE(f[0]->action.find("pid 9000"), std::string::npos) << f[0]->action;
  EXPECT_NE(f[0]->evidence.find("18.0 GiB"), std::string::npos)
      << f[0]->evidence;
}

// The owner exited after forking; its child still holds the device files.
// The finding names the child (not the NVML-only agent) and says to end
// it, never to reset a GPU that a process still holds open.
TEST(ScenarioFindings, OrphanedMemoryNamesTheForkedChildThatHoldsIt) {
  for (int gpus : {1, 4}) {
    DiagnoseResult r = run_scenario("forked-child-holder", gpus);
    auto f = pointers_with_id(r, "orphaned-memory");
    ASSERT_EQ(f.size(), 1u) << ids_of(r);
    EXPECT_EQ(f[0]->gpus, std::vector<int>{gpus - 1});
    EXPECT_NE(std::find(f[0]->pids.begin(), f[0]->pids.end(), 9301u),
              f[0]->pids.end());
    EXPECT_EQ(std::find(f[0]->pids.begin(), f[0]->pids.end(), 950u),
              f[0]->pids.end());
    EXPECT_NE(f[0]->evidence.find("pid 9301 python (user alice)"),
              std::string::npos)
        << f[0]->evidence;
    EXPECT_NE(f[0]->evidence.find("same command (python) as the vanished "
                                  "owner 9300"),
              std::string::npos)
        << f[0]->evidence;
    EXPECT_NE(f[0]->action.find("`gpudoctor kill 9301`"), std::string::npos)
        << f[0]->action;
    EXPECT_EQ(f[0]->action.find("--gpu-reset"), std::string::npos)
        << f[0]->action;
  }
}

TEST(ScenarioFindings, OrphanWithNobodyHoldingTheFilesAdvisesAReset) {
  DiagnoseResult r = run_scenario("missing-owner", 1);
  auto f = pointers_with_id(r, "orphaned-memory");
  ASSERT_EQ(f.size(), 1u) << ids_of(r);
  // The trace did not record device files: who is the way to find out.
  EXPECT_NE(f[0]->action.find("gpudoctor who 0"), std::string::npos)
      << f[0]->action;
}

TEST(ScenarioFindings, LeakGivesRateAndTimeToExhaustion) {
  DiagnoseResult r = run_scenario("memory-leak", 1);
  auto f = pointers_with_id(r, "memory-leak");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0]->pids, std::vector<uint32_t>{8000});
  // ~64 MiB/min by construction (20 MiB segments).
  EXPECT_NE(f[0]->title.find("at 6"), std::string::npos) << f[0]->title;
  EXPECT_NE(f[0]->evidence.find("full in about"), std::string::npos)
      << f[0]->evidence;
}

TEST(ScenarioFindings, DriverCudaMismatchNamesTheDriverVersionToInstall) {
  DiagnoseResult r = run_scenario("driver-cuda-mismatch", 1);
  auto f = pointers_with_id(r, "driver-cuda-mismatch");
  ASSERT_EQ(f.size(), 1u);
  // CUDA 12.4 needs Linux driver 550.54.14 or newer.
  EXPECT_NE(f[0]->action.find("550.54.14"), std::string::npos) << f[0]->action;
}

TEST(ScenarioFindings, NoFindingsOnAHealthyJobMeansExitZero) {
  DiagnoseResult r = run_scenario("healthy-training", 8);
  EXPECT_TRUE(r.findings.empty()) << ids_of(r);
  EXPECT_EQ(diagnose_exit_code(r), 0);
  // Every rule ran: one per catalogue id that is not planned.
  EXPECT_EQ(r.rules_checked.size(),
            findings_md_ids().size() - planned_ids().size());
}

TEST(ScenarioFindings, OutcomesDoNotDependOnTheNoiseSeed) {
  // A rule that fires by luck of the noise is not a diagnosis.
  for (const char* scenario :
       {"input-bound", "io-bound", "memory-leak", "caching-allocator",
        "hot-no-throttle", "unrelated-jobs", "cpu-contention",
        "input-bound-oscillating", "train-eval-cycle", "swap-storm"}) {
    std::set<std::string> first;
    for (uint64_t seed : {1, 2, 3, 4, 5}) {
      DiagnoseResult r = run_scenario(scenario, 2, nullptr, seed);
      std::set<std::string> ids;
      for (const Finding& f : r.findings) ids.insert(f.id);
      if (seed == 1) first = ids;
      EXPECT_EQ(ids, first) << scenario << " seed " << seed;
    }
  }
}

}  // namespace
}  // namespace gd::test
