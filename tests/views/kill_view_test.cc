// What `gpudoctor kill` prints about the outcome of its session.
#include "views/kill_view.h"

#include <gtest/gtest.h>

#include <csignal>

namespace gd {
namespace {

using namespace procmgmt;

TEST(KillView, MemoryTheDriverKeptIsExplainedWithWhatToDo) {
  KillOutcome o;
  o.result = KillResult::kNotReleased;
  o.memory.push_back({0, 7ull << 30, 7ull << 30});
  HeldMemory h;
  h.pid = 4242;
  h.gpu = 0;
  AccountedProcess ap;
  ap.pid = 4242;
  ap.used_bytes = 6ull << 30;
  ap.status = HolderStatus::kMissing;
  h.account.processes.push_back(ap);
  h.next = "reset it";
  o.not_released.push_back(h);
  EXPECT_EQ(render_kill_outcome(o),
            "GPU 0: used 7.0 GiB before, 7.0 GiB now\n"
            "GPU memory NOT released:\n"
            "  pid 4242 has exited but NVML still lists it on GPU 0 with 6.0 "
            "GiB: the driver has not freed its memory\n"
            "    next: reset it\n");
  EXPECT_EQ(o.exit_code(), kKillExitNotReleased);
}

TEST(KillView, MemoryNoListedProcessAccountsForIsNamed) {
  KillOutcome o;
  o.result = KillResult::kNotReleased;
  o.memory.push_back({0, 7ull << 30, 7ull << 30});
  HeldMemory h;
  h.pid = 4242;
  h.gpu = 0;
  h.unlisted_bytes = 7ull << 30;
  h.next = "reset it";
  o.not_released.push_back(h);
  EXPECT_EQ(render_kill_outcome(o),
            "GPU 0: used 7.0 GiB before, 7.0 GiB now\n"
            "GPU memory NOT released:\n"
            "  NVML no longer lists the ended processes on GPU 0, but 7.0 GiB "
            "of its used memory belongs to no listed process: the driver has "
            "not freed it\n"
            "    next: reset it\n");
}

TEST(KillView, SurvivorsAreListedWithTheirStateAndWhy) {
  KillOutcome o;
  o.result = KillResult::kStillAlive;
  o.still_alive.push_back({77, 'S', "it ignores SIGTERM"});
  std::string text = render_kill_outcome(o);
  EXPECT_EQ(text.rfind("Still alive:\n  77 (", 0), 0u) << text;
  EXPECT_NE(text.find("): it ignores SIGTERM\n"), std::string::npos) << text;
}

TEST(KillView, EachSignalIsOneLine) {
  EXPECT_EQ(render_signal_sent(42, SIGTERM, ""), "sent SIGTERM to 42\n");
  EXPECT_EQ(render_signal_sent(42, SIGKILL, "it has already exited"),
            "could not send SIGKILL to 42: it has already exited\n");
}

}  // namespace
}  // namespace gd
