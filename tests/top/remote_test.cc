// top --connect against a hostile "serve" (tests/http_client has the
// client's own bounds): a remote kill job's destructor does not wait on the
// network, and a deep reply is refused before it is walked.

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "api/kill_json.h"
#include "common/bounded_json.h"
#include "http_client/fake_server.h"
#include "monitor/kill_job.h"
#include "monitor/remote_feed.h"
#include "monitor/remote_json.h"
#include "monitor/remote_kill.h"

namespace gd::monitor {
namespace {

using http::testing::FakeServer;

TEST(RemoteKill, ARemoteKillJobsDestructorDoesNotWaitOnTheNetwork) {
  // The plan's reply drips: the job is still planning when it goes.
  FakeServer server(FakeServer::Mode::kDrip, "", 150);
  {
    RemoteOptions o;
    o.url = server.url();
    KillJob job({1234}, remote_kill_backend(o), {}, [] {});
    while (server.dripped() < 3)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_EQ(job.stage(), KillJob::Stage::kPlanning);
  }
  EXPECT_LT(server.dripped(), 150) << "the destructor waited for the reply";
}

TEST(RemoteJson, RepliesNestedDeeperThan64LevelsAreRefused) {
  auto nested = [](int depth) {
    return std::string(static_cast<size_t>(depth), '[') +
           std::string(static_cast<size_t>(depth), ']');
  };
  EXPECT_NO_THROW(parse_bounded_json(nested(kMaxJsonDepth)));
  EXPECT_THROW(parse_bounded_json(nested(kMaxJsonDepth + 1)), JsonTooDeep);
  EXPECT_TRUE(parse_bounded_json("{").is_discarded());
  // 100,000 objects deep under "header": refused with one line, not a
  // stack overflow in the walk that follows a parse.
  std::string deep = "{\"header\": ";
  for (int i = 0; i < 100000; ++i) deep += "{\"a\": ";
  deep += "1" + std::string(100000, '}') + "}";
  try {
    parse_remote_status(deep);
    ADD_FAILURE() << "accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "nested deeper than 64 levels");
  }
  try {
    api::parse_kill_api_reply("{\"plan\": " + nested(100000) + "}");
    ADD_FAILURE() << "accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "kill reply: nested deeper than 64 levels");
  }
  // Wide is fine: a flat array of a million numbers is one level, and an
  // array of 200,000 objects is read in one pass (nlohmann's parser
  // callback would rescan the array at every object: 2e10 steps).
  std::string wide = "[0";
  for (int i = 0; i < 1000000; ++i) wide += ",0";
  EXPECT_EQ(parse_bounded_json(wide + "]").size(), 1000001u);
  std::string objects = "[{}";
  for (int i = 0; i < 200000; ++i) objects += ",{}";
  EXPECT_EQ(parse_bounded_json(objects + "]").size(), 200001u);
}

}  // namespace
}  // namespace gd::monitor
