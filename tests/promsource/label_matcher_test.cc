#include "promsource/label_matcher.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace gd::promsource {
namespace {

TEST(LabelMatcher, AcceptsPromqlMatcherLists) {
  for (const char* ok :
       {R"({cluster="a"})", R"({ cluster = "a" , rack=~"r1.*" })",
        R"({a!="b",c!~"d",e=~"",_f="x\"y\\"})", R"({cluster="a",})"})
    EXPECT_NO_THROW(check_label_matcher(ok)) << ok;
}

TEST(LabelMatcher, RefusesAnythingElse) {
  for (const char* bad :
       {"", "{}", R"(cluster="a")", R"({cluster="a")", R"({cluster=a})",
        R"({1x="a"})", R"({a=="b"})", R"({a!"b"})", R"({a="b"} or up)",
        R"({a="b"}{c="d"})", R"({a="b})", "{a=\"\x01\"}", R"({a="b" c="d"})"})
    EXPECT_THROW(check_label_matcher(bad), std::invalid_argument) << bad;
}

TEST(LabelMatcher, IsBounded) {
  std::string big = "{a=\"" + std::string(kLabelMatcherMax, 'x') + "\"}";
  EXPECT_THROW(check_label_matcher(big), std::invalid_argument);
}

}  // namespace
}  // namespace gd::promsource
