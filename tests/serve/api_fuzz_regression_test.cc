// Query parameters libFuzzer found mishandled (tests/fuzz/api_query_fuzz);
// each reproducer is also in the fuzz seed corpus.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "serve/api.h"

namespace gd {
namespace {

// A finite number of weeks that overflows to infinite seconds was taken as
// a step of +inf (and a since of -inf), which then reached the store.
TEST(ApiFuzzRegression, DurationOverflowingToInfinityIsRejected) {
  EXPECT_THROW(parse_step("1e308w"), std::invalid_argument);
  EXPECT_THROW(parse_since("1e308w", 1.7e9), std::invalid_argument);
  EXPECT_THROW(parse_since("1e306d", 1.7e9), std::invalid_argument);
}

// Answers every query; the test only looks at the status.
class AnyHistory : public History {
 public:
  void set_header(const TraceHeader&) override {}
  void append(const Sample&) override {}
  void flush() override {}
  void maintain(double) override {}
  std::string query_json(const HistoryQuery&) const override { return "{}"; }
};

// std::stod threw std::out_of_range (not the std::invalid_argument callers
// catch) for a subnormal number, so the exception escaped the handler.
TEST(ApiFuzzRegression, SubnormalSinceIsATimeNotAnException) {
  EXPECT_EQ(parse_since("1e-320", 1.7e9), 1e-320);
  AnyHistory h;
  auto r =
      api_history(&h, {{"metric", "gpu.util_pct"}, {"since", "1e-320"}}, 1.7e9);
  EXPECT_EQ(r.status, 200) << r.body;
}

TEST(ApiFuzzRegression, HistoryWithAnInfiniteStepOrSinceIs400) {
  AnyHistory h;
  for (const QueryParams& p :
       {QueryParams{{"metric", "gpu.util_pct"}, {"step", "1e308w"}},
        QueryParams{{"metric", "gpu.util_pct"}, {"since", "1e308w"}}}) {
    auto r = api_history(&h, p, 1.7e9);
    EXPECT_EQ(r.status, 400) << r.body;
    EXPECT_TRUE(nlohmann::json::parse(r.body).contains("error")) << r.body;
  }
}

}  // namespace
}  // namespace gd
