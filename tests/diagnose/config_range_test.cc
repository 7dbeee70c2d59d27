// Every numeric key of a diagnose/serve TOML config has a range; NaN, a
// negative number or a value outside the range is a one-line
// "FILE:LINE: key 'x': why" error instead of a silently disabled rule.
#include <gtest/gtest.h>

#include <string>

#include "diagnose/config.h"

namespace gd {
namespace {

std::string config_error_of(const std::string& toml) {
  try {
    Config::from_toml_string(toml, "site.toml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(ConfigRange, NanIsRejectedWithFileLineAndKey) {
  EXPECT_EQ(config_error_of("[input-bound]\n\nstarved_util_pct = nan\n"),
            "site.toml:3: key 'input-bound.starved_util_pct': nan is not a "
            "number");
}

// A quoted key may hold control characters (found by serve_config_fuzz:
// `"\r"=nan`); the error still is one line, the key escaped.
TEST(ConfigRange, ControlCharactersInAKeyAreEscapedInTheError) {
  EXPECT_EQ(config_error_of("\"a\\r\\nb\" = nan\n"),
            "site.toml:1: key 'a\\r\\nb': nan is not a number");
  EXPECT_EQ(config_error_of("[\"x\\ty\"]\nz = \"text\"\n").find('\t'),
            std::string::npos);
}

TEST(ConfigRange, NegativeValuesAreRejected) {
  EXPECT_EQ(config_error_of("[memory-leak]\nmin_window_s = -5\n"),
            "site.toml:2: key 'memory-leak.min_window_s': -5 is out of range "
            "0..315360000 (seconds, at most ten years)");
  EXPECT_NE(config_error_of("[orphaned-memory]\ndriver_reserve_gib = -1.5\n"),
            "");
  EXPECT_NE(config_error_of("[xid-error]\nrepeat_count = -3\n"), "");
}

TEST(ConfigRange, EachKindOfKeyHasItsRange) {
  EXPECT_NE(config_error_of("[input-bound]\nstarved_util_pct = 150\n"), "");
  EXPECT_NE(config_error_of("[thermal-throttling]\nmin_fraction = 1.5\n"), "");
  EXPECT_NE(config_error_of("[thermal-throttling]\nclock_ratio = 2\n"), "");
  EXPECT_NE(config_error_of("[gpu-lost]\nhot_margin_c = 1000\n"), "");
  EXPECT_NE(config_error_of("[power-capping]\nmin_samples = 0\n"), "");
  EXPECT_NE(config_error_of("[power-capping]\nmin_samples = 2.5\n"), "");
  EXPECT_NE(config_error_of("[alerting]\nwindow_s = inf\n"), "");
  EXPECT_NE(config_error_of("[alerting.for_s]\ngpu-lost = -1\n"), "");
  EXPECT_NE(config_error_of("[input-bound]\nmin_saturated_workers = 3\n"), "");
  EXPECT_NE(config_error_of("[host-swapping]\nactive_pages_per_s = 1e300\n"),
            "");
}

TEST(ConfigRange, ValidValuesStillLoad) {
  Config c = Config::from_toml_string(
      "[input-bound]\nstarved_util_pct = 20\nmin_saturated_workers = 0.5\n"
      "[memory-leak]\nmin_window_s = 1800\n[host-swapping]\n"
      "active_pages_per_s = 250\n[xid-error]\nrepeat_count = 5\n"
      "[alerting]\nwindow_s = 30\n",
      "site.toml");
  EXPECT_DOUBLE_EQ(c.get("input-bound.starved_util_pct", 30), 20);
  EXPECT_DOUBLE_EQ(c.get("memory-leak.min_window_s", 300), 1800);
  EXPECT_EQ(c.where("xid-error.repeat_count"), "site.toml:9");
  EXPECT_EQ(config_error_of("[power-brake]\nmin_run_samples = 3.0\n"), "");
}

}  // namespace
}  // namespace gd
