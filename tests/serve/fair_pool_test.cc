// The pool that runs password checks (serve/fair_pool.h): keys (client
// addresses) take turns, each key's queue and the whole queue are bounded,
// and a new key always gets a place.
#include "serve/fair_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace gd {
namespace {

// A one-thread pool held busy until release(), recording what ran.
struct HeldPool {
  explicit HeldPool(size_t max_waiting, size_t per_key)
      : pool(1, max_waiting, per_key) {
    EXPECT_TRUE(pool.try_submit("busy", [this](bool) {
      started.set_value();
      released.wait();
    }));
    started.get_future().wait();  // the one thread is busy
  }
  std::function<void(bool)> job(std::string name) {
    return [this, name](bool cancelled) {
      std::lock_guard lock(mu);
      (cancelled ? refused : ran).push_back(name);
    };
  }
  // Released at the end in any case, so that a failed test does not hang.
  ~HeldPool() {
    if (!was_released) release();
    pool.stop();
  }
  void release() {
    was_released = true;
    opened.set_value();
  }
  std::vector<std::string> ran_after(size_t n) {
    for (;;) {
      {
        std::lock_guard lock(mu);
        if (ran.size() >= n) return ran;
      }
      std::this_thread::yield();
    }
  }
  std::promise<void> started, opened;
  std::shared_future<void> released = opened.get_future().share();
  std::mutex mu;
  std::vector<std::string> ran, refused;
  bool was_released = false;
  FairPool pool;
};

TEST(FairPool, KeysTakeTurnsSoAFloodDelaysAnotherKeyByOneJob) {
  HeldPool p(64, 32);
  for (int i = 0; i < 5; ++i)
    ASSERT_TRUE(
        p.pool.try_submit("10.0.0.66", p.job("flood" + std::to_string(i))));
  ASSERT_TRUE(p.pool.try_submit("10.0.0.5", p.job("login")));
  p.release();
  const auto ran = p.ran_after(6);
  EXPECT_EQ(ran, (std::vector<std::string>{"flood0", "login", "flood1",
                                           "flood2", "flood3", "flood4"}));
}

TEST(FairPool, AKeyPastItsShareIsRefused) {
  HeldPool p(64, 2);
  EXPECT_TRUE(p.pool.try_submit("a", p.job("a1")));
  EXPECT_TRUE(p.pool.try_submit("a", p.job("a2")));
  EXPECT_FALSE(p.pool.try_submit("a", p.job("a3")));
  EXPECT_TRUE(p.pool.try_submit("b", p.job("b1")));
  p.release();
  EXPECT_EQ(p.ran_after(3).size(), 3u);
}

// All places taken: a new key pushes out the newest job of the key with
// the most (that job is answered as refused); a key as full as the rest
// is refused.
TEST(FairPool, WhenFullANewKeyPushesOutTheFloodsNewestJob) {
  HeldPool p(3, 3);
  EXPECT_TRUE(p.pool.try_submit("flood", p.job("f1")));
  EXPECT_TRUE(p.pool.try_submit("flood", p.job("f2")));
  EXPECT_TRUE(p.pool.try_submit("flood", p.job("f3")));
  EXPECT_TRUE(p.pool.try_submit("login", p.job("l1")));
  {
    std::lock_guard lock(p.mu);
    EXPECT_EQ(p.refused, std::vector<std::string>{"f3"});
  }
  EXPECT_TRUE(p.pool.try_submit("other", p.job("o1")));   // pushes out f2
  EXPECT_FALSE(p.pool.try_submit("login", p.job("l2")));  // 1, 1, 1: full
  p.release();
  EXPECT_EQ(p.ran_after(3), (std::vector<std::string>{"f1", "l1", "o1"}));
  std::lock_guard lock(p.mu);
  EXPECT_EQ(p.refused, (std::vector<std::string>{"f3", "f2"}));
}

TEST(FairPool, StopCancelsWaitingJobsSoEachRequestStillGetsAnAnswer) {
  HeldPool p(8, 8);
  for (const char* key : {"a", "b", "a"})
    EXPECT_TRUE(p.pool.try_submit(key, p.job(key)));
  std::thread stopper([&] { p.pool.stop(); });
  p.release();
  stopper.join();
  EXPECT_FALSE(p.pool.try_submit("c", p.job("late")));
  std::lock_guard lock(p.mu);
  EXPECT_EQ(p.refused.size() + p.ran.size(), 3u);
}

}  // namespace
}  // namespace gd
