// The pool that runs slow HTTP handlers: bounded queue, refusal when full,
// cancellation on stop (serve/bounded_pool.h).
#include "serve/bounded_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>

namespace gd {
namespace {

TEST(BoundedPool, RefusesWhenItsQueueIsFullAndRunsTheRest) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::promise<void> started;
  std::atomic<int> ran{0};
  BoundedPool pool(1, 2);
  ASSERT_TRUE(pool.try_submit([&](bool) {
    started.set_value();
    released.wait();
    ++ran;
  }));
  started.get_future().wait();  // the one thread is busy
  EXPECT_TRUE(pool.try_submit([&](bool c) { ran += c ? 0 : 1; }));
  EXPECT_TRUE(pool.try_submit([&](bool c) { ran += c ? 0 : 1; }));
  EXPECT_FALSE(pool.try_submit([&](bool) { ran += 100; }));
  release.set_value();
  while (ran < 3) std::this_thread::yield();
  EXPECT_TRUE(pool.try_submit([&](bool c) { ran += c ? 0 : 1; }));
  while (ran < 4) std::this_thread::yield();
  pool.stop();
  EXPECT_EQ(ran, 4);
}

TEST(BoundedPool, StopCancelsWaitingJobsSoEachRequestStillGetsAnAnswer) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::promise<void> started;
  std::atomic<int> cancelled{0}, completed{0};
  BoundedPool pool(1, 4);
  pool.try_submit([&](bool) {
    started.set_value();
    released.wait();
    ++completed;
  });
  started.get_future().wait();
  for (int i = 0; i < 3; ++i)
    pool.try_submit([&](bool c) { ++(c ? cancelled : completed); });
  std::thread stopper([&] { pool.stop(); });
  while (cancelled < 3) std::this_thread::yield();
  release.set_value();
  stopper.join();
  EXPECT_EQ(cancelled, 3);
  EXPECT_EQ(completed, 1);
  EXPECT_FALSE(pool.try_submit([](bool) {}));
}

}  // namespace
}  // namespace gd
