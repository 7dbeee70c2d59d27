// Config inputs libFuzzer found mishandled (tests/fuzz/diagnose_config_fuzz,
// serve_config_fuzz); each reproducer is also in the fuzz seed corpus.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "diagnose/config.h"

namespace gd {
namespace {

std::string error_of(const std::string& toml) {
  try {
    Config::from_toml_string(toml, "site.toml");
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

// TOML spells inf and nan; a threshold of either silently disables a rule
// (every comparison with NaN is false), so it is refused like a string.
TEST(ConfigFuzzRegression, InfiniteOrNanThresholdIsAnErrorWithPosition) {
  for (const char* value : {"inf", "-inf", "nan", "+nan"}) {
    const std::string error = error_of(
        std::string("[memory-leak]\n\nmin_window_s = ") + value + "\n");
    EXPECT_EQ(error.rfind("site.toml:3:", 0), 0u) << value << ": " << error;
    EXPECT_NE(error.find("memory-leak.min_window_s"), std::string::npos)
        << error;
  }
}

// toml++ quotes the text it choked on, a line feed included: the error
// must still be the one line the CLI prints.
TEST(ConfigFuzzRegression, ParseErrorQuotingALineFeedStaysOneLine) {
  const std::string error = error_of("[alerting]\nfor_critical_s = f\nx = 1\n");
  ASSERT_EQ(error.rfind("site.toml:2:", 0), 0u) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  EXPECT_EQ(error.find('\r'), std::string::npos) << error;
}

}  // namespace
}  // namespace gd
