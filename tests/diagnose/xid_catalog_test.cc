// The Xid catalogue against the facts in real/xid_catalog.md and the real
// kernel lines in real/xid_lines.txt of the contracts (GD_SHARED_DIR: the live
// ../shared beside the checkout, else the snapshot in tests/data/shared, so
// the files are always there and their absence is a failure).
#include "diagnose/xid_catalog.h"

#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>

#include "kernellog/kernel_log.h"
#include "scenario_builder.h"

namespace gd::test {
namespace {

const std::string kRealDir = std::string(GD_SHARED_DIR) + "/real";

// Codes named in the first cell of a table row: "8", "37 / 38",
// "39-41, 70-77, 85", "144-150".
std::set<int> codes_in_cell(const std::string& cell) {
  std::set<int> out;
  size_t i = 0;
  while (i < cell.size()) {
    if (!std::isdigit(static_cast<unsigned char>(cell[i]))) {
      ++i;
      continue;
    }
    size_t end = i;
    int first = std::stoi(cell.substr(i), &end);
    i += end;
    int last = first;
    if (i < cell.size() && cell[i] == '-') {
      ++i;
      last = std::stoi(cell.substr(i), &end);
      i += end;
    }
    for (int c = first; c <= last; ++c) out.insert(c);
  }
  return out;
}

// Every code of the "Per-code facts" table.
std::set<int> codes_in_catalog_md(const std::string& path) {
  std::ifstream in(path);
  std::set<int> codes;
  bool in_table = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("## Per-code facts", 0) == 0)
      in_table = true;
    else if (line.rfind("## ", 0) == 0)
      in_table = false;
    if (!in_table || line.rfind("| ", 0) != 0) continue;
    std::string cell = line.substr(2, line.find('|', 2) - 2);
    if (cell.empty() || !std::isdigit(static_cast<unsigned char>(cell[0])))
      continue;
    for (int c : codes_in_cell(cell)) codes.insert(c);
  }
  return codes;
}

TEST(XidCatalog, KnowsEveryCodeOfTheSharedFactsFile) {
  const std::string path = kRealDir + "/xid_catalog.md";
  ASSERT_TRUE(std::filesystem::exists(path)) << path << " is absent";
  auto codes = codes_in_catalog_md(path);
  ASSERT_GT(codes.size(), 60u) << "table not parsed";
  for (int code : codes) {
    const XidInfo* info = find_xid(code);
    ASSERT_NE(info, nullptr) << "Xid " << code << " missing from the catalogue";
    EXPECT_NE(std::string(info->meaning), "") << code;
    EXPECT_NE(std::string(info->action), "") << code;
    EXPECT_NE(info->cause, XidCause::unknown) << code;
  }
}

TEST(XidCatalog, ApplicationFaultsAreWarningsAndHardwareCodesCritical) {
  for (int code : {13, 31, 43}) {
    ASSERT_NE(find_xid(code), nullptr) << code;
    EXPECT_EQ(xid_severity(code, ""), "warning") << code;
    EXPECT_EQ(find_xid(code)->cause, XidCause::application) << code;
  }
  for (int code : {48, 63, 64, 74, 79, 92, 94, 95, 119, 120})
    EXPECT_EQ(xid_severity(code, ""), "critical") << code;
  EXPECT_EQ(find_xid(79)->cause, XidCause::pcie_bus);
  EXPECT_EQ(find_xid(48)->cause, XidCause::memory);
  EXPECT_EQ(find_xid(74)->cause, XidCause::nvlink);
  EXPECT_EQ(
      xid_severity(45, "NVRM: Xid (PCI:0000:01:00): 45, pid=1, Ch 00000001"),
      "info");
}

TEST(XidCatalog, SeverityReadsTheMessageWhereTheCodeIsAmbiguous) {
  EXPECT_EQ(xid_severity(144, "144, SAW_MVB Nonfatal XC0 i0 Link 0 (0x1)"),
            "warning");
  EXPECT_EQ(xid_severity(149, "149, NETIR Fatal XC0 i0 Link -1 (0x000fe406)"),
            "critical");
  EXPECT_EQ(
      xid_severity(154, "changed from 0x0 (None) to 0x1 (GPU Reset Required)"),
      "critical");
  EXPECT_EQ(
      xid_severity(154, "changed from 0x1 (GPU Reset Required) to 0x0 (None)"),
      "info");
}

TEST(XidCatalog, UnknownCodeIsNotCataloguedAndAWarning) {
  EXPECT_EQ(find_xid(999), nullptr);
  EXPECT_EQ(find_xid(0), nullptr);
  EXPECT_EQ(xid_severity(999, "anything"), "warning");
}

TEST(XidCatalog, CatalogueIsSortedWithoutDuplicates) {
  const auto& t = xid_catalog();
  for (size_t i = 1; i < t.size(); ++i) EXPECT_LT(t[i - 1].code, t[i].code);
}

TEST(XidCatalog, EveryRealXidLineBecomesAnXidErrorFinding) {
  const std::string path = kRealDir + "/xid_lines.txt";
  ASSERT_TRUE(std::filesystem::exists(path)) << path << " is absent";
  std::ifstream in(path);
  PciIndex pci;  // no GPU matches: findings carry the raw line without a GPU
  int n = 0;
  for (std::string line; n < 47 && std::getline(in, line);
       ++n) {  // lines 1-47 are Xid lines
    auto event = parse_kernel_log_line(line, pci);
    ASSERT_TRUE(event.has_value()) << "line " << n + 1 << ": " << line;
    ASSERT_EQ(event->kind, "xid") << "line " << n + 1;
    ASSERT_TRUE(event->code.has_value()) << "line " << n + 1;
    auto samples = make_samples(2, 1.0, [&](size_t i, Sample& s) {
      if (i == 1) s.events.push_back(*event);
    });
    auto xid = with_id(run_diagnose(make_header(1), samples), "xid-error");
    ASSERT_EQ(xid.size(), 1u) << "line " << n + 1;
    EXPECT_NE(xid[0].title.find("Xid " + std::to_string(*event->code)),
              std::string::npos)
        << "line " << n + 1 << ": " << xid[0].title;
    EXPECT_NE(find_xid(*event->code), nullptr)
        << "line " << n + 1 << " code " << *event->code;
    EXPECT_NE(xid[0].evidence.find(event->text), std::string::npos)
        << "line " << n + 1;
  }
  EXPECT_EQ(n, 47);
}

}  // namespace
}  // namespace gd::test
