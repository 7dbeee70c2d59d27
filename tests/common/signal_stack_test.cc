// A crash handler still runs after a thread overflowed its stack, when the
// thread has a SignalStack and the handler is installed with SA_ONSTACK
// (top restores the terminal this way).
#include "common/signal_stack.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <thread>

namespace gd {
namespace {

// Recurses until the stack runs out (the bound is never reached; it keeps
// the compiler from seeing an endless recursion).
int overflow(int depth) {
  volatile char frame[4096];
  frame[0] = static_cast<char>(depth);
  if (depth > 1000000000) return frame[0];
  return overflow(depth + 1) + frame[0];
}

void on_crash(int sig) {
  static const char kText[] = "the handler ran\n";
  [[maybe_unused]] ssize_t n = ::write(STDERR_FILENO, kText, sizeof kText - 1);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

TEST(SignalStackDeathTest, AHandlerRunsAfterAThreadOverflowsItsStack) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        struct sigaction sa {};
        sigemptyset(&sa.sa_mask);
        sa.sa_handler = on_crash;
        sa.sa_flags = SA_RESETHAND | SA_ONSTACK;
        ::sigaction(SIGSEGV, &sa, nullptr);
        std::thread t([] {
          SignalStack stack;
          overflow(0);
        });
        t.join();
      },
      testing::KilledBySignal(SIGSEGV), "the handler ran");
}

}  // namespace
}  // namespace gd
