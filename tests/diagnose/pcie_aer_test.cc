// pcie-aer-errors: uncorrected errors are critical at once; corrected ones
// only when they keep repeating.
#include <gtest/gtest.h>

#include "scenario_builder.h"
#include "text_contains.h"

namespace gd::test {
namespace {

Event aer(std::optional<int> gpu, std::string severity,
          std::string address = "") {
  Event e;
  e.kind = kEventPcieAer;
  e.gpu = gpu;
  e.severity = std::move(severity);
  e.pci_address = std::move(address);
  e.text = "pcieport 0000:00:01.1: AER: " + e.severity + " error received";
  return e;
}

// 600 one-second samples of a busy GPU 0; a corrected error on its link at
// every sample i for which `at(i)` holds.
std::vector<Finding> corrected_at(const std::function<bool(size_t)>& at) {
  auto h = make_header(1);
  Jitter j;
  auto samples = make_samples(600, 1.0, [&](size_t i, Sample& s) {
    s.gpus.push_back(busy_gpu(0, j));
    if (at(i)) s.events.push_back(aer(0, "corrected"));
  });
  return with_id(run_diagnose(h, samples), "pcie-aer-errors");
}

TEST(PcieAerErrors, SilentForOneCorrectedError) {
  EXPECT_TRUE(corrected_at([](size_t i) { return i == 300; }).empty());
}

TEST(PcieAerErrors, SilentForAFewCorrectedErrorsOrASlowTrickle) {
  // Four within a minute: below the count of five.
  EXPECT_TRUE(
      corrected_at([](size_t i) { return i >= 100 && i < 104; }).empty());
  // One a minute for ten minutes: below three a minute.
  EXPECT_TRUE(corrected_at([](size_t i) { return i % 60 == 0; }).empty());
}

TEST(PcieAerErrors, RepeatingCorrectedErrorsAreAWarningWithTheirRate) {
  auto f = corrected_at([](size_t i) { return i % 10 == 0; });  // 6 a minute
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, "warning");
  EXPECT_EQ(f[0].gpus, std::vector<int>{0});
  EXPECT_TRUE(contains(f[0].evidence,
                       "0 fatal, 0 uncorrected non-fatal, 60 "
                       "corrected (corrected: 6.1 a minute)"))
      << f[0].evidence;
  EXPECT_TRUE(contains(f[0].action, "riser")) << f[0].action;
  EXPECT_TRUE(contains(f[0].action, "lspci -s 0000:07:00.0 -vv"))
      << f[0].action;
}

TEST(PcieAerErrors, OneUncorrectedErrorOnThePortAboveIsCritical) {
  auto h = make_header(1);
  Jitter j;
  auto samples = make_samples(60, 1.0, [&](size_t i, Sample& s) {
    s.gpus.push_back(busy_gpu(0, j));
    if (i == 30)
      s.events.push_back(
          aer(std::nullopt, "uncorrected_non_fatal", "0000:00:01.1"));
  });
  auto f = with_id(run_diagnose(h, samples), "pcie-aer-errors");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, "critical");
  EXPECT_TRUE(f[0].gpus.empty());
  EXPECT_TRUE(contains(f[0].evidence, "PCI 0000:00:01.1")) << f[0].evidence;
  EXPECT_TRUE(contains(f[0].evidence, "1 uncorrected non-fatal"))
      << f[0].evidence;
  EXPECT_TRUE(contains(f[0].action, "lspci -s 0000:00:01.1 -vv"))
      << f[0].action;
}

}  // namespace
}  // namespace gd::test
