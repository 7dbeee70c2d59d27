#include "common/run_program.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <string>

namespace gd {
namespace {

// A killed child reparented to an init that does not reap stays a zombie.
bool running_not_zombie(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return false;
  auto close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() &&
         stat[close + 2] != 'Z';
}

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

TEST(RunProgram, StdoutAloneWhenAsked) {
  ProgramOptions o;
  o.deadline_s = 10;
  o.with_stderr = false;
  auto r = run_program({"sh", "-c", "echo out; echo err >&2"}, o);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.output, "out\n");
}

TEST(RunProgram, AFloodIsStoppedAtTheCapWhenAsked) {
  ProgramOptions o;
  o.deadline_s = 20;
  o.max_output = 1000;
  o.kill_past_cap = true;
  // Without the kill this would print for the whole deadline.
  const auto t0 = std::chrono::steady_clock::now();
  auto r = run_program({"sh", "-c", "yes; sleep 30"}, o);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
                .count(),
            15);
  EXPECT_TRUE(r.output_cut);
  EXPECT_FALSE(r.timed_out);
  EXPECT_FALSE(r.exit_code);
  EXPECT_EQ(r.output.size(), 1000u);
  EXPECT_EQ(program_failure_text(r, "scontrol", 20),
            "scontrol printed more than 1000 bytes and was stopped");
}

TEST(RunProgram, ChildrenLeftBehindAreKilledWithTheGroup) {
  // The script exits at once; its background child closed the pipe and
  // would live on.
  std::atomic<pid_t> running{0};
  ProgramOptions o;
  o.deadline_s = 10;
  o.running = &running;
  auto r = run_program(
      {"sh", "-c", "sleep 30 >/dev/null 2>&1 & echo $!; exit 0"}, o);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(running.load(), 0);
  pid_t child = std::stoi(r.output);
  for (int i = 0; i < 500 && running_not_zombie(child); ++i) usleep(10000);
  EXPECT_FALSE(running_not_zombie(child))
      << "pid " << child << " outlived its group";
}

}  // namespace
}  // namespace gd
