// The acid test: real kernel-log lines from public bug reports
// (real/xid_lines.txt of the contracts in GD_SHARED_DIR). Its "## sources"
// section states, for every line, the Xid code or that it is not an Xid; this
// test reads both at run time and checks every line.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "kernellog/kernel_log.h"

namespace {

const std::string kPath = std::string(GD_SHARED_DIR) + "/real/xid_lines.txt";

struct RealLines {
  std::vector<std::string> lines;              // line 1 = lines[0]
  std::map<int, std::optional<int>> expected;  // line number -> code or not-xid
};

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  size_t e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// "10-11 | xid=145, xid=149 | url | notes" -> expected[10]=145, [11]=149;
// "1-3 | xid=13 | ..." -> all three 13; "48-50 | non-xid (...) | ..." -> none.
void parse_source_line(const std::string& row, RealLines& out) {
  std::stringstream ss(row);
  std::string range, expect;
  std::getline(ss, range, '|');
  std::getline(ss, expect, '|');
  range = trim(range);
  expect = trim(expect);
  int first = 0, last = 0;
  size_t dash = range.find('-');
  first = std::stoi(range.substr(0, dash));
  last = dash == std::string::npos ? first : std::stoi(range.substr(dash + 1));
  std::vector<std::optional<int>> codes;
  if (expect.starts_with("non-xid") || expect.starts_with("not xid")) {
    codes.push_back(std::nullopt);
  } else {
    for (size_t at = expect.find("xid="); at != std::string::npos;
         at = expect.find("xid=", at + 1))
      codes.push_back(std::stoi(expect.substr(at + 4)));
  }
  ASSERT_FALSE(codes.empty()) << "cannot read expectation: " << row;
  const int n = last - first + 1;
  ASSERT_TRUE(codes.size() == 1 || static_cast<int>(codes.size()) == n) << row;
  for (int i = 0; i < n; ++i)
    out.expected[first + i] = codes.size() == 1 ? codes[0] : codes[i];
}

bool load(RealLines& out) {
  std::ifstream in(kPath);
  if (!in) return false;
  std::string line;
  bool in_sources = false;
  while (std::getline(in, line)) {
    if (line.starts_with("## sources")) {
      in_sources = true;
      // The blank line that separates the sections is not a log line.
      while (!out.lines.empty() && trim(out.lines.back()).empty())
        out.lines.pop_back();
      continue;
    }
    if (!in_sources) {
      out.lines.push_back(line);
    } else if (!line.empty() && line[0] >= '0' && line[0] <= '9') {
      parse_source_line(line, out);
    }
  }
  return true;
}

}  // namespace

TEST(RealXidLines, EveryLineMatchesItsDocumentedExpectation) {
  RealLines real;
  // GD_SHARED_DIR falls back to the snapshot in tests/data/shared, so the
  // file is always there: its absence is a failure, not a reason to skip.
  ASSERT_TRUE(load(real)) << "cannot read " << kPath;
  ASSERT_GT(real.lines.size(), 0u);
  gd::PciIndex pci;
  int xids = 0, non_xids = 0;
  for (size_t i = 0; i < real.lines.size(); ++i) {
    const int n = static_cast<int>(i) + 1;
    const std::string& line = real.lines[i];
    auto want = real.expected.find(n);
    ASSERT_NE(want, real.expected.end())
        << "line " << n << " has no expectation in ## sources";
    auto e = gd::parse_kernel_log_line(line, pci);
    if (want->second) {
      ++xids;
      ASSERT_TRUE(e) << "line " << n << " should be Xid " << *want->second
                     << ": " << line;
      EXPECT_EQ(e->kind, "xid") << "line " << n;
      EXPECT_EQ(e->code, *want->second) << "line " << n << ": " << line;
      EXPECT_EQ(e->text, trim(line)) << "line " << n;
      if (line.find("pid='<unknown>'") != std::string::npos) {
        EXPECT_FALSE(e->pid) << "line " << n;
      }
    } else {
      ++non_xids;
      EXPECT_FALSE(e && e->kind == "xid")
          << "line " << n << " is not an Xid but parsed as code "
          << e->code.value_or(-1) << ": " << line;
    }
  }
  EXPECT_EQ(real.expected.size(), real.lines.size())
      << "## sources names lines the file does not have";
  EXPECT_GT(xids, 0);
  EXPECT_GT(non_xids, 0);
  std::printf("checked %d Xid lines and %d non-Xid lines from %s\n", xids,
              non_xids, kPath.c_str());
}

TEST(RealXidLines, PciAddressesOfRealLinesMapToGpus) {
  RealLines real;
  // GD_SHARED_DIR falls back to the snapshot in tests/data/shared, so the
  // file is always there: its absence is a failure, not a reason to skip.
  ASSERT_TRUE(load(real)) << "cannot read " << kPath;
  // The bus ids NVML would report for three GPUs named in the file.
  gd::PciIndex pci;
  pci.add("00000000:CB:00.0", 0);
  pci.add("00000018:01:00.0", 1);
  pci.add("00000000:10:1C.0", 2);
  std::map<int, int> gpu_seen;
  for (const std::string& line : real.lines) {
    auto e = gd::parse_kernel_log_line(line, pci);
    if (e && e->gpu) ++gpu_seen[*e->gpu];
  }
  EXPECT_GT(gpu_seen[0], 0) << "0000:cb:00 lines";
  EXPECT_EQ(gpu_seen[1], 1) << "PCI:0018:01:00 (not 0019:01:00)";
  EXPECT_EQ(gpu_seen[2], 1) << "PCI:0000:10:1c";
}

TEST(RealXidLines, NonXidDriverLinesWorthKeepingAreNvrmOrSxidEvents) {
  RealLines real;
  ASSERT_TRUE(load(real)) << "cannot read " << kPath;
  // Lines 48-71 in order, as a log: the fallen-off message on 48-50 and 53
  // (no Xid), the API mismatches (58, 59), RmInitAdapter failed (61), the
  // fallen-off line 64, the GSP timeout (65) and missing GSP firmware (66),
  // and the NVSwitch SXid (69). The rest is chatter.
  gd::KernelLogClassifier c;
  gd::PciIndex pci;
  std::map<int, std::string> kinds;
  for (int n = 48; n <= 71 && n <= static_cast<int>(real.lines.size()); ++n)
    if (auto e = c.classify(real.lines[n - 1], pci).event) kinds[n] = e->kind;
  const std::map<int, std::string> want = {
      {50, "nvrm"}, {53, "nvrm"}, {58, "nvrm"}, {59, "nvrm"}, {61, "nvrm"},
      {64, "nvrm"}, {65, "nvrm"}, {66, "nvrm"}, {69, "sxid"}};
  EXPECT_EQ(kinds, want);
}
