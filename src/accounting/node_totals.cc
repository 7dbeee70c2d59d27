#include "accounting/node_totals.h"

namespace gd::accounting {

NodeTotals node_totals(const AccountReport& r) {
  NodeTotals n;
  for (const GpuAccount& g : r.gpus) {
    ++n.gpus;
    n.wall_s += g.wall_s;
    n.held_s += g.held_s;
    n.unheld_s += g.unheld_s;
    n.unattributed_s += g.unattributed_s;
    n.busy_s += g.busy_s;
    n.sm_active_s += g.sm_active_s;
    n.sm_measured_s += g.sm_measured_s;
    n.energy_j += g.energy_j;
    n.held_energy_j += g.held_energy_j;
    n.idle_energy_j += g.idle_energy_j;
    n.unattributed_energy_j += g.unattributed_energy_j;
    n.energy_counter_j += g.energy_counter_j;
    n.energy_power_j += g.energy_power_j;
    n.unmeasured_s += g.unmeasured_s;
    n.counter_resets += g.counter_resets;
    n.gaps += g.gaps;
    if (g.energy_power_j > 0) ++n.gpus_without_counter;
  }
  return n;
}

}  // namespace gd::accounting
