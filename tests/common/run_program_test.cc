#include "common/run_program.h"

#include <gtest/gtest.h>

#include <chrono>

namespace gd {
namespace {

TEST(RunProgram, CollectsOutputAndExitCode) {
  auto r = run_program({"sh", "-c", "echo out; echo err >&2; exit 3"}, 10);
  EXPECT_TRUE(r.started);
  EXPECT_FALSE(r.timed_out);
  ASSERT_TRUE(r.exit_code);
  EXPECT_EQ(*r.exit_code, 3);
  EXPECT_EQ(r.output, "out\nerr\n");
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(program_failure_text(r, "x", 10), "x exited 3: out");
}

TEST(RunProgram, MissingProgramSaysWhy) {
  auto r = run_program({"/nonexistent/scontrol", "show"}, 10);
  EXPECT_FALSE(r.started);
  EXPECT_NE(r.error.find("cannot run /nonexistent/scontrol"), std::string::npos)
      << r.error;
}

TEST(RunProgram, AHungProgramAndItsChildrenAreKilledAtTheDeadline) {
  // The child keeps the pipe open too: only killing the group ends it.
  const auto t0 = std::chrono::steady_clock::now();
  auto r = run_program({"sh", "-c", "sleep 30 & sleep 30"}, 0.3);
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.exit_code);
  EXPECT_LT(took, 20);  // not the children's 30 s
  EXPECT_EQ(program_failure_text(r, "scontrol", 0.3),
            "scontrol timed out after 0.3 s");
}

TEST(RunProgram, OutputIsCapped) {
  auto r = run_program({"sh", "-c", "yes | head -c 1000000"}, 10, 1000);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.output.size(), 1000u);
}

}  // namespace
}  // namespace gd
