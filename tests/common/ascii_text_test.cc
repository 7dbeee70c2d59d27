#include "common/ascii_text.h"

#include <gtest/gtest.h>

namespace gd {
namespace {

TEST(AsciiText, TrimDropsBlanksAtBothEndsOnly) {
  EXPECT_EQ(trim(" \t gzip, br \r\n"), "gzip, br");
  EXPECT_EQ(trim("a b"), "a b");
  EXPECT_EQ(trim(" \t\r\n"), "");
  EXPECT_EQ(trim(""), "");
}

TEST(AsciiText, TrimLeftKeepsTheEnd) {
  EXPECT_EQ(trim_left("\t  Severity: x "), "Severity: x ");
}

TEST(AsciiText, LowerFoldsOnlyAsciiLetters) {
  EXPECT_EQ(ascii_lower("Application/JSON"), "application/json");
  // UTF-8 bytes pass through untouched, whatever the locale says.
  EXPECT_EQ(ascii_lower("\xC3\x89T\xC3\xA9"), "\xC3\x89t\xC3\xA9");
}

TEST(AsciiText, IequalsComparesWithoutCase) {
  EXPECT_TRUE(iequals("GZip", "gzip"));
  EXPECT_FALSE(iequals("gzip", "gzip2"));
  EXPECT_FALSE(iequals("[", "{"));  // '[' + 32 is '{': not a letter
}

TEST(AsciiText, IcontainsFindsWithoutCase) {
  EXPECT_TRUE(icontains("NVRM: API MISMATCH: the client", "mismatch"));
  EXPECT_FALSE(icontains("match", "mismatch"));
  EXPECT_TRUE(icontains("anything", ""));
}

}  // namespace
}  // namespace gd
