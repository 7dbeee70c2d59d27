// Minute averages are written as soon as a raw block is sealed (not only
// when it ages out of the raw tier), and each read takes one tier: step=60
// reads the minutes, every other read the raw samples, never both.
#include <gtest/gtest.h>

#include <cmath>

#include "store/downsample.h"
#include "store/history_store.h"
#include "store_test_util.h"

namespace gd {
namespace {

using testing::kT0;
using testing::make_sample;
using testing::open_store;
using testing::sql_int;
using testing::StoreDir;

TEST(Rollup, FreshDataIsReadFromTheMinuteTierAtMinuteSteps) {
  StoreDir dir;
  const std::string path = dir.path("h.db");
  auto store = open_store(path, 10, 30 * 86400.0);
  const int n = 3 * 3600;
  for (int i = 0; i < n; ++i) store->append(make_sample(kT0 + i, i));
  store->flush();
  // 12 raw blocks a call: the first call rolls up two hours, and a
  // minute-step read takes the third from the raw blocks.
  store->maintain(kT0 + n + 600);
  EXPECT_EQ(sql_int(path, "SELECT count(*) FROM blocks WHERE tier = 1"), 2);
  EXPECT_EQ(store->query("gpu.util_pct", 1, std::nullopt, kT0, kT0 + n, 60)
                .at(0)
                .points.size(),
            180u);
  store->maintain(kT0 + n + 660);
  // Raw data is kept (it is not a day old) and rolled up besides.
  EXPECT_EQ(sql_int(path, "SELECT count(*) FROM blocks WHERE tier = 0"), 18);
  EXPECT_EQ(sql_int(path, "SELECT count(*) FROM blocks WHERE tier = 1"), 3);

  auto minute = store->query("gpu.util_pct", 1, std::nullopt, kT0, kT0 + n, 60);
  ASSERT_EQ(minute.size(), 1u);
  ASSERT_EQ(minute[0].points.size(), 180u);
  // util of GPU 1 is (i % 10) * 2: every minute averages to 9.
  for (const auto& p : minute[0].points) EXPECT_DOUBLE_EQ(p.v, 9.0);
  auto raw = store->query("gpu.util_pct", 1, std::nullopt, kT0, kT0 + n, 0);
  ASSERT_EQ(raw[0].points.size(), static_cast<size_t>(n));  // no doubles
  auto five = store->query("gpu.util_pct", 1, std::nullopt, kT0, kT0 + n, 5);
  EXPECT_EQ(five[0].points.size(), static_cast<size_t>(n / 5));
  // Process metrics at minute steps come from the minutes too.
  auto used =
      store->query("process.used_bytes", 0, std::nullopt, kT0, kT0 + n, 60);
  ASSERT_EQ(used.size(), 1u);
  EXPECT_EQ(used[0].points.size(), 180u);

  size_t exported = 0;
  store->scan(0, 1e18, [&](const Sample&) {
    ++exported;
    return true;
  });
  EXPECT_EQ(exported, static_cast<size_t>(n));
}

TEST(Rollup, AMaintainRollsUpOnlyWhatIsNew) {
  StoreDir dir;
  const std::string path = dir.path("h.db");
  auto store = open_store(path, 10, 30 * 86400.0);
  for (int i = 0; i < 1200; ++i) store->append(make_sample(kT0 + i, i));
  store->flush();
  store->maintain(kT0 + 1800);
  for (int i = 1200; i < 2400; ++i) store->append(make_sample(kT0 + i, i));
  store->flush();
  store->maintain(kT0 + 3000);
  store->maintain(kT0 + 3000);
  auto minute =
      store->query("gpu.util_pct", 0, std::nullopt, kT0, kT0 + 2400, 60);
  ASSERT_EQ(minute[0].points.size(), 40u);
  for (size_t m = 0; m < 40; ++m)
    EXPECT_EQ(minute[0].points[m].t, kT0 + 60 * m);
  // A day later the raw blocks go; the minutes stay.
  store->maintain(kT0 + store::kRawKeepS + 3600);
  EXPECT_EQ(sql_int(path, "SELECT count(*) FROM blocks WHERE tier = 0"), 0);
  auto later =
      store->query("gpu.util_pct", 0, std::nullopt, kT0, kT0 + 2400, 0);
  EXPECT_EQ(later[0].points.size(), 40u);
}

}  // namespace
}  // namespace gd
