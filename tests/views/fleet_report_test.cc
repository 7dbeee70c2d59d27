#include "views/fleet_report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace gd {
namespace {

FleetNodeOutcome node(const std::string& name, int exit_code,
                      std::vector<std::string> ids) {
  FleetNodeOutcome n;
  n.node = name;
  n.checked = true;
  n.exit_code = exit_code;
  for (auto& id : ids) {
    Finding f;
    f.id = id;
    n.findings.push_back(f);
  }
  n.not_judged.push_back({"xid-error", "no kernel log"});
  return n;
}

std::vector<FleetNodeOutcome> fleet() {
  FleetNodeOutcome down;
  down.node = "n-down";
  down.why_not = "HTTP 500\x1b[2J";
  return {node("n-a", 1, {"thermal-throttling"}),
          node("n-b", 2, {"ecc-errors", "thermal-throttling"}),
          node("n-c", 0, {}), down};
}

TEST(FleetReport, SummaryText) {
  const std::string s = format_fleet_summary_text(fleet());
  EXPECT_NE(s.find("nodes checked: 3 of 4\n"), std::string::npos) << s;
  EXPECT_NE(s.find("could not check 1:\n  n-down: HTTP 500\\e[2J\n"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("  thermal-throttling  2\n"), std::string::npos) << s;
  EXPECT_NE(s.find("worst nodes:\n  n-b  critical, 2 finding(s)\n  n-a  "
                   "warning, 1 finding(s)\n"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("  xid-error  3: no kernel log\n"), std::string::npos) << s;
  EXPECT_EQ(s.find('\x1b'), std::string::npos);
}

TEST(FleetReport, NodeText) {
  auto f = fleet();
  EXPECT_EQ(format_fleet_node_text(f[3], ""),
            "== n-down ==\ncould not check: HTTP 500\\e[2J\n");
  EXPECT_EQ(format_fleet_node_text(f[0], "All is well"),
            "== n-a ==\nAll is well\n");
}

TEST(FleetReport, SummaryJson) {
  auto j = nlohmann::json::parse(format_fleet_summary_json(fleet()));
  EXPECT_EQ(j["checked"], 3);
  EXPECT_EQ(j["not_checked"][0]["node"], "n-down");
  EXPECT_EQ(j["findings"][1]["id"], "thermal-throttling");
  EXPECT_EQ(j["findings"][1]["nodes"], 2);
  EXPECT_EQ(j["worst"][0]["node"], "n-b");
  EXPECT_EQ(j["worst"].size(), 2u);
  EXPECT_EQ(j["not_judged"][0]["nodes"], 3);
  auto n = nlohmann::json::parse(format_fleet_node_json(fleet()[3], ""));
  EXPECT_EQ(n["error"], "HTTP 500\x1b[2J");
}

}  // namespace
}  // namespace gd
