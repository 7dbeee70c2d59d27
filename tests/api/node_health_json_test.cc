// /api/v1/health: what serve writes reads back field for field, and a
// hostile or broken body is one line naming what is wrong.
#include "api/node_health_json.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace gd::api {
namespace {

std::string refusal(const std::string& body) {
  try {
    parse_node_health_json(body);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(NodeHealthJson, WritesWhatItReads) {
  NodeHealthReply r;
  r.node = "gpu-07";
  r.evaluated_at = 1700000000.5;
  r.gpus = {
      {0, "GPU-a", "healthy", "", {}, "none"},
      {1, "GPU-b", "unhealthy", "critical: xid-error", {"xid-error"}, ""}};
  r.host_findings = {"host-swapping"};
  r.state = worst_gpu_state(r.gpus);
  EXPECT_EQ(r.state, "unhealthy");
  const std::string text = node_health_json(r);
  EXPECT_NE(text.find("\"recovery_action\":null"), std::string::npos) << text;
  NodeHealthReply back = parse_node_health_json(text);
  EXPECT_EQ(back.node, "gpu-07");
  EXPECT_EQ(back.state, "unhealthy");
  EXPECT_EQ(back.evaluated_at, 1700000000.5);
  ASSERT_EQ(back.gpus.size(), 2u);
  EXPECT_EQ(back.gpus[1].findings, std::vector<std::string>{"xid-error"});
  EXPECT_EQ(back.gpus[1].reason, "critical: xid-error");
  EXPECT_EQ(back.gpus[0].recovery_action, "none");
  EXPECT_EQ(back.gpus[1].recovery_action, "");
  EXPECT_EQ(back.host_findings, std::vector<std::string>{"host-swapping"});
}

TEST(NodeHealthJson, WorstStateOrdersUnknownAboveDegraded) {
  EXPECT_EQ(worst_gpu_state({}), "unknown");
  EXPECT_EQ(worst_gpu_state({{0, "", "healthy", "", {}, ""},
                             {1, "", "degraded", "", {}, ""}}),
            "degraded");
  EXPECT_EQ(worst_gpu_state({{0, "", "unknown", "", {}, ""},
                             {1, "", "degraded", "", {}, ""}}),
            "unknown");
}

TEST(NodeHealthJson, BrokenBodiesAreOneLine) {
  EXPECT_NE(refusal("[]").find("not a JSON object"), std::string::npos);
  EXPECT_EQ(refusal("{}"), "health: no 'state'");
  EXPECT_NE(refusal(R"({"state":"ok","gpus":5})").find("'gpus'"),
            std::string::npos);
  EXPECT_NE(refusal(R"({"state":"ok","gpus":[{"gpu":-1}]})").find("gpu"),
            std::string::npos);
  EXPECT_NE(refusal(R"({"state":"ok","host_findings":[1]})").find("string"),
            std::string::npos);
}

}  // namespace
}  // namespace gd::api
