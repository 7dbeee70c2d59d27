// The energy of one GPU between two of its samples: from the driver's
// energy counter (GpuSample.energy_mj_total, millijoules since the driver
// loaded), else power_w x dt where the counter is absent.
#pragma once

#include <cstdint>
#include <optional>

#include "accounting/account.h"
#include "model/sample.h"

namespace gd::accounting {

struct IntervalEnergy {
  std::optional<double> joules;  // nullopt: neither counter nor power known
  EnergyMethod method = EnergyMethod::kCounter;
  bool counter_reset = false;  // the counter went backwards
};

// One per GPU; fed that GPU's samples in time order.
class EnergyMeter {
 public:
  // `power_limit_w` (the header's, when known) bounds what a counter delta
  // may claim: a jump beyond it is a corrupt reading, not energy.
  explicit EnergyMeter(std::optional<double> power_limit_w = std::nullopt)
      : power_limit_w_(power_limit_w) {}
  // The energy of the `dt` seconds that end with `cur`. The first call
  // only remembers the counter (no interval ends there).
  IntervalEnergy next(const GpuSample& cur, double dt);

 private:
  bool plausible(double joules, double dt) const;
  std::optional<uint64_t> last_mj_;
  std::optional<double> power_limit_w_;
};

}  // namespace gd::accounting
