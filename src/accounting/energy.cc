#include "accounting/energy.h"

#include "model/limits.h"

namespace gd::accounting {
namespace {

// A GPU draws at most a few times its power limit even in a spike; with no
// limit known, no GPU of today draws 10 kW.
constexpr double kLimitFactor = 3;
constexpr double kMaxWattsUnknownLimit = 10000;

}  // namespace

bool EnergyMeter::plausible(double joules, double dt) const {
  if (!(dt > 0) || joules < 0) return false;
  // A limit past what any GPU has (model/sample.h) is no limit.
  const double max_w = power_limit_w_ && *power_limit_w_ > 0 &&
                               *power_limit_w_ <= kMaxPowerLimitW
                           ? *power_limit_w_ * kLimitFactor
                           : kMaxWattsUnknownLimit;
  return joules / dt <= max_w;
}

IntervalEnergy EnergyMeter::next(const GpuSample& cur, double dt) {
  IntervalEnergy out;
  const std::optional<uint64_t> prev = last_mj_;
  if (cur.energy_mj_total) last_mj_ = cur.energy_mj_total;
  if (prev && cur.energy_mj_total) {
    const uint64_t now = *cur.energy_mj_total;
    if (now >= *prev) {
      const double j = static_cast<double>(now - *prev) / 1000.0;
      if (plausible(j, dt)) {
        out.joules = j;
        return out;
      }
    } else {
      // Backwards: the driver was reloaded (or a GPU reset) and the
      // counter restarted from 0, so what it holds now is the energy
      // since then. (A 64-bit count of millijoules does not wrap.)
      out.counter_reset = true;
      const double j = static_cast<double>(now) / 1000.0;
      if (plausible(j, dt)) {
        out.joules = j;
        return out;
      }
    }
  }
  if (cur.power_w && *cur.power_w >= 0 && plausible(*cur.power_w * dt, dt)) {
    out.joules = *cur.power_w * dt;
    out.method = EnergyMethod::kPower;
  }
  return out;
}

}  // namespace gd::accounting
