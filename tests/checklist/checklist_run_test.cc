// The whole table on a healthy and a misconfigured machine, exit codes and
// the text / JSON output.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "checklist/check_util.h"
#include "checklist_fixture.h"
#include "views/checklist_view.h"

namespace gd::test {
namespace {

using ::testing::HasSubstr;

std::optional<uint64_t> shm_8g(const std::string&) { return 8ull << 30; }
std::optional<uint64_t> shm_64m(const std::string&) { return 64ull << 20; }

TEST(Checklist, EveryCheckPassesOnAHealthyMachine) {
  ChecklistTree tree("healthy");
  tree.add_gpus_behind_switch(4096, 0x0000);
  auto h = healthy_header();
  auto s = healthy_sample();
  CheckContext ctx(h, s, tree.proc(), tree.sys());
  ctx.fs_size_bytes = shm_8g;
  auto items = run_checks(ctx);
  std::set<std::string> seen;
  for (const auto& i : items) {
    EXPECT_EQ(i.status, CheckStatus::kPass)
        << i.id << ": " << i.value << " / " << i.detail;
    seen.insert(i.id);
  }
  EXPECT_EQ(seen.size(), check_table().size());
  EXPECT_EQ(checklist_exit_code(items), 0);
}

TEST(Checklist, EveryCheckWarnsOrFailsOnAMisconfiguredMachine) {
  ChecklistTree tree("misconfigured");
  tree.add_gpus_behind_switch(4096, 0x001d);
  auto h = healthy_header();
  h.driver->nvml_version = "12.550.54.14";  // library from another release
  h.gpus[1].persistence_mode = false;
  h.gpus[1].ecc_enabled = false;
  h.gpus[1].power_limit_w = 250.0;
  auto s = healthy_sample();
  s.processes[0].libs = {"libcudart.so.12.4.99"};
  s.gpus[1].remapped_rows_pending = true;
  s.gpus[1].pcie_width = 8;
  s.gpus[1].ecc_sram_uncorrectable_aggregate_total = 1;
  s.gpus[1].row_remap_histogram = RowRemapHistogram{630, 0, 8, 2, 0};
  s.gpus[1].recovery_action = kRecoveryGpuReset;
  h.gpus[1].mig_enabled_pending = true;  // waits for a GPU reset
  (*s.gpus[1].nvlinks)[3].active = false;
  s.gpus[1].fabric_state = kFabricNotStarted;
  CheckContext ctx(h, s, tree.proc(), tree.sys());
  ctx.fs_size_bytes = shm_64m;
  auto items = run_checks(ctx);
  std::map<std::string, bool> flagged;
  for (const auto& i : items)
    flagged[i.id] |=
        i.status == CheckStatus::kWarn || i.status == CheckStatus::kFail;
  ASSERT_EQ(flagged.size(), check_table().size());
  for (const auto& [id, bad] : flagged) EXPECT_TRUE(bad) << id;
  // kernel-module fails (550 module, 535 library): exit 2.
  EXPECT_EQ(checklist_exit_code(items), 2);
}

TEST(Checklist, ExitCodeIsWorstStatus) {
  std::vector<CheckItem> items = {{"a", CheckStatus::kPass, "v", ""},
                                  {"b", CheckStatus::kSkip, "-", "why"}};
  EXPECT_EQ(checklist_exit_code(items), 0);
  items.push_back({"c", CheckStatus::kWarn, "v", "do"});
  EXPECT_EQ(checklist_exit_code(items), 1);
  items.push_back({"d", CheckStatus::kFail, "v", "do"});
  items.push_back({"e", CheckStatus::kWarn, "v", "do"});
  EXPECT_EQ(checklist_exit_code(items), 2);
}

TEST(Checklist, TextAlignsValuesAndPutsActionsUnderThem) {
  std::vector<CheckItem> items = {
      {"driver", CheckStatus::kPass, "driver 535.129.03", ""},
      {"transparent-hugepages", CheckStatus::kWarn, "enabled=always",
       "set madvise"},
      {"dev-shm", CheckStatus::kSkip, "-", "no GPU processes"}};
  std::string text = format_checklist_text(items);
  std::istringstream in(text);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 7u) << text;
  // Every value starts in the same column as the VALUE heading.
  size_t col = lines[0].find("VALUE");
  EXPECT_EQ(lines[1].find("driver 535"), col);
  EXPECT_EQ(lines[2].find("enabled=always"), col);
  EXPECT_EQ(lines[3].find("-> set madvise"), col);
  // A skip without a value gives its reason in the value column.
  EXPECT_EQ(lines[4].find("no GPU processes"), col);
  EXPECT_EQ(lines[4].substr(0, 4), "skip");
  EXPECT_EQ(lines[5], "");
  EXPECT_EQ(lines[1].substr(0, 4), "pass");
  EXPECT_EQ(lines[2].substr(0, 4), "warn");
  EXPECT_THAT(text, HasSubstr("1 pass, 1 warn, 0 fail, 1 skip"));
}

TEST(Checklist, JsonHasOneObjectPerItem) {
  std::vector<CheckItem> items = {
      {"swappiness", CheckStatus::kWarn, "vm.swappiness = 60", "sysctl"},
      {"iommu", CheckStatus::kPass, "off", ""}};
  auto j = nlohmann::json::parse(format_checklist_json(items));
  ASSERT_EQ(j["checks"].size(), 2u);
  EXPECT_EQ(j["checks"][0]["id"], "swappiness");
  EXPECT_EQ(j["checks"][0]["status"], "warn");
  EXPECT_EQ(j["checks"][0]["value"], "vm.swappiness = 60");
  EXPECT_EQ(j["checks"][0]["detail"], "sysctl");
  EXPECT_EQ(j["checks"][1]["status"], "pass");
}

TEST(Checklist, WithoutDriverHostChecksStillRun) {
  ChecklistTree tree("misconfigured");
  TraceHeader h;
  h.nvml_status = kNvmlNoDriver;
  Sample s;
  CheckContext ctx(h, s, tree.proc(), tree.sys());
  auto items = run_checks(ctx);
  std::map<std::string, CheckStatus> by_id;
  for (const auto& i : items) by_id[i.id] = i.status;
  EXPECT_EQ(by_id["driver"], CheckStatus::kSkip);
  EXPECT_EQ(by_id["swappiness"], CheckStatus::kWarn);
  EXPECT_EQ(by_id["cpu-governor"], CheckStatus::kWarn);
  EXPECT_EQ(by_id["kernel-module"], CheckStatus::kWarn);  // module, no library
  EXPECT_EQ(checklist_exit_code(items), 1);
}

TEST(CheckUtil, CpuListParsing) {
  using checklist::parse_cpu_list;
  EXPECT_EQ(parse_cpu_list("0-3,8,10-11\n"),
            (std::set<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpu_list(""), std::set<int>{});
  EXPECT_FALSE(parse_cpu_list("3-1"));
  EXPECT_FALSE(parse_cpu_list("a-b"));
  EXPECT_FALSE(parse_cpu_list("0-99999999999"));
}

}  // namespace
}  // namespace gd::test
