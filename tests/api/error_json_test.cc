// serve's error replies: {"error": "..."} written, and read back by a
// client; anything else is no error message.
#include "api/error_json.h"

#include <gtest/gtest.h>

#include <string>

namespace gd::api {
namespace {

TEST(ErrorJson, ReadsBackTheMessage) {
  const std::string body = error_json("parameter 'gpu': 'x\"' is not a \n");
  EXPECT_EQ(body, R"({"error":"parameter 'gpu': 'x\"' is not a \n"})");
  EXPECT_EQ(parse_error_json(body), "parameter 'gpu': 'x\"' is not a \n");
}

TEST(ErrorJson, WhatIsNotAnErrorHasNoMessage) {
  EXPECT_FALSE(parse_error_json("Internal Server Error"));
  EXPECT_FALSE(parse_error_json(R"({"error":7})"));
  EXPECT_FALSE(parse_error_json(R"({"status":"ok"})"));
  EXPECT_FALSE(parse_error_json(std::string(100000, '[')));  // too deep
  const auto long_one =
      parse_error_json(R"({"error":")" + std::string(5000, 'e') + R"("})");
  ASSERT_TRUE(long_one);
  EXPECT_EQ(long_one->size(), 1024u);
}

}  // namespace
}  // namespace gd::api
