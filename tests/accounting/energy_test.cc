// The energy sanity bound: a counter jump past what the GPU can draw is a
// corrupt reading, and a power limit no GPU has (1e308 W from a hostile
// series or trace) does not lift the bound.
#include "accounting/energy.h"

#include <gtest/gtest.h>

#include "model/limits.h"

namespace gd::accounting {
namespace {

// The energy of a counter jump of `joules` in 15 s, with `limit_w`.
std::optional<double> jump(std::optional<double> limit_w, double joules) {
  EnergyMeter m(limit_w);
  GpuSample s;
  s.energy_mj_total = 1000000;
  m.next(s, 15);
  s.energy_mj_total = 1000000 + static_cast<uint64_t>(joules * 1000);
  return m.next(s, 15).joules;
}

TEST(EnergyMeter, AJumpPastThreeTimesTheLimitIsNoEnergy) {
  EXPECT_EQ(jump(700, 700 * 15), 700 * 15);
  EXPECT_FALSE(jump(700, 3 * 700 * 15 + 1000));
}

TEST(EnergyMeter, ALimitNoGpuHasIsNoLimit) {
  // 9e15 J in 15 s: 2.5e9 kWh if a 1e308 W limit were believed.
  EXPECT_FALSE(jump(1e308, 9e15));
  EXPECT_FALSE(jump(kMaxPowerLimitW * 2, 3 * kMaxPowerLimitW * 15));
  // Without a limit (or with none believable), 10 kW is the bound.
  EXPECT_EQ(jump(1e308, 9000 * 15), 9000 * 15);
}

}  // namespace
}  // namespace gd::accounting
