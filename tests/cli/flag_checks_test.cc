// Numbers on the command line are decimal digits and durations go through
// the common parser: CLI11 alone reads "010" as octal 8 and "0x10" as 16.
#include "cli/flag_checks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace gd {
namespace {

// Parses `args` (after the program name); the error message, or "".
std::string parse(CLI::App& app, std::vector<std::string> args) {
  std::reverse(args.begin(), args.end());  // CLI11 takes them reversed
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  return "";
}

TEST(DecimalIn, PidsAreDecimalNeverOctalOrHex) {
  for (const char* bad : {"0x10", "+5", "1e3", " 7", "7 ", "-1", "", "1.0",
                          "99999999999999999999999"}) {
    CLI::App app;
    std::vector<uint32_t> pids;
    app.add_option("pids", pids)->transform(decimal_in(1, kMaxPid));
    std::string error = parse(app, {bad});
    EXPECT_NE(error.find(std::string("'") + bad + "'"), std::string::npos)
        << bad << ": " << error;
  }
  CLI::App app;
  std::vector<uint32_t> pids;
  app.add_option("pids", pids)->transform(decimal_in(1, kMaxPid));
  EXPECT_EQ(parse(app, {"010", "42"}), "");
  EXPECT_EQ(pids, (std::vector<uint32_t>{10, 42}));  // 010 is ten, not 8
}

TEST(DecimalIn, RangeIsEnforced) {
  CLI::App app;
  std::optional<int> gpu;
  app.add_option("--gpu", gpu)->transform(decimal_in(0, kMaxGpuIndex));
  EXPECT_NE(parse(app, {"--gpu", "1024"}).find("out of range 0..1023"),
            std::string::npos);
  CLI::App ok;
  ok.add_option("--gpu", gpu)->transform(decimal_in(0, kMaxGpuIndex));
  EXPECT_EQ(parse(ok, {"--gpu", "0007"}), "");
  EXPECT_EQ(gpu, 7);
}

TEST(DurationOption, RangeAndUnitsFromTheCommonParser) {
  double interval = 1;
  CLI::App app;
  add_duration_option(app, "--interval", interval, {0.01, 3600}, "interval");
  EXPECT_NE(parse(app, {"--interval", "0"}).find("out of range 10ms..1h"),
            std::string::npos);
  CLI::App app2;
  add_duration_option(app2, "--interval", interval, {0.01, 3600}, "interval");
  EXPECT_NE(parse(app2, {"--interval", "1e308"}).find("invalid duration"),
            std::string::npos);
  CLI::App app3;
  add_duration_option(app3, "--interval", interval, {0.01, 3600}, "interval");
  EXPECT_EQ(parse(app3, {"--interval", "250ms"}), "");
  EXPECT_DOUBLE_EQ(interval, 0.25);
}

}  // namespace
}  // namespace gd
