#include "common/closest_word.h"

#include <gtest/gtest.h>

namespace gd {
namespace {

const std::vector<std::string> kFlags = {
    "--duration", "--from", "--json", "--gpu", "--min-severity", "--serve"};
const std::vector<std::string> kCommands = {"status", "ps",   "top",
                                            "who",    "kill", "diagnose"};

TEST(ClosestWord, TyposOfAFlag) {
  EXPECT_EQ(closest_word("--durtion", kFlags), "--duration");
  EXPECT_EQ(closest_word("--duratoin", kFlags), "--duration");  // a swap
  EXPECT_EQ(closest_word("--jsn", kFlags), "--json");
  EXPECT_EQ(closest_word("--min-severty", kFlags), "--min-severity");
}

TEST(ClosestWord, TyposOfACommand) {
  EXPECT_EQ(closest_word("stauts", kCommands), "status");
  EXPECT_EQ(closest_word("diagnsoe", kCommands), "diagnose");
  EXPECT_EQ(closest_word("kil", kCommands), "kill");
}

TEST(ClosestWord, AnAbbreviationOfOneCandidate) {
  EXPECT_EQ(closest_word("--min", kFlags), "--min-severity");
  EXPECT_EQ(closest_word("diag", kCommands), "diagnose");
}

TEST(ClosestWord, NothingNearIsNoSuggestion) {
  EXPECT_EQ(closest_word("--frobnicate", kFlags), "");
  EXPECT_EQ(closest_word("xyz", kCommands), "");
  EXPECT_EQ(closest_word("", kCommands), "");
  EXPECT_EQ(closest_word(std::string(1000, 'a'), kCommands), "");
  EXPECT_EQ(closest_word("--json", kFlags), "");  // not a typo
}

}  // namespace
}  // namespace gd
