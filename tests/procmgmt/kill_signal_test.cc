#include "procmgmt/kill_signal.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>

#include "fixture_proc.h"

namespace gd::procmgmt {
namespace {

TEST(ParseSignal, NamesAndNumbers) {
  EXPECT_EQ(parse_signal("TERM"), SIGTERM);
  EXPECT_EQ(parse_signal("SIGKILL"), SIGKILL);
  EXPECT_EQ(parse_signal("int"), SIGINT);
  EXPECT_EQ(parse_signal("9"), 9);
  EXPECT_FALSE(parse_signal("FOO"));
  EXPECT_FALSE(parse_signal("0"));
  EXPECT_FALSE(parse_signal("999"));
  EXPECT_FALSE(parse_signal(""));
  EXPECT_EQ(signal_name(SIGTERM), "SIGTERM");
}

TEST(Liveness, FromFixture) {
  test::FixtureProc fx;
  auto live = read_proc_entry(fx.proc(), 1001);
  auto zombie = read_proc_entry(fx.proc(), 2001);
  ASSERT_TRUE(live && zombie);
  EXPECT_EQ(liveness_of(fx.proc(), *live), Liveness::kAlive);
  EXPECT_EQ(liveness_of(fx.proc(), *zombie), Liveness::kZombie);
  ProcEntry reused = *live;
  reused.starttime += 1;  // same pid, another process
  EXPECT_EQ(liveness_of(fx.proc(), reused), Liveness::kGone);
  ProcEntry gone = *live;
  gone.pid = 9999;
  EXPECT_EQ(liveness_of(fx.proc(), gone), Liveness::kGone);
}

// A real child: signalled through its pidfd when it is the planned process,
// left alone when the plan's start time says it is another one.
TEST(PinnedProcess, SignalsOnlyThePlannedProcess) {
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    pause();
    _exit(0);
  }
  auto planned = read_proc_entry("/proc", static_cast<uint32_t>(child));
  ASSERT_TRUE(planned);

  ProcEntry other = *planned;
  other.starttime += 1;
  PinnedProcess wrong("/proc", other);
  EXPECT_TRUE(wrong.gone());
  EXPECT_EQ(wrong.send(SIGKILL, Requester::current()), "it has already exited");
  EXPECT_EQ(liveness_of("/proc", *planned), Liveness::kAlive)
      << "the child was signalled";

  PinnedProcess right("/proc", *planned);
  EXPECT_FALSE(right.gone());
  EXPECT_EQ(right.send(SIGTERM, Requester::current()), "");
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  // Reaped: the pidfd still names it, and it is gone.
  EXPECT_EQ(right.send(SIGTERM, Requester::current()), "it has already exited");
}

}  // namespace
}  // namespace gd::procmgmt
