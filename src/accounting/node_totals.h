// The node's line of a report: the GPUs' figures added up (what was
// available, held, busy, SM-active; where the energy went).
#pragma once

#include "accounting/account.h"

namespace gd::accounting {

struct NodeTotals {
  int gpus = 0;
  double wall_s = 0;  // sum of the GPUs' wall time: GPU-seconds available
  double held_s = 0, unheld_s = 0, unattributed_s = 0;
  double busy_s = 0, sm_active_s = 0, sm_measured_s = 0;
  double energy_j = 0, held_energy_j = 0, idle_energy_j = 0,
         unattributed_energy_j = 0;
  double energy_counter_j = 0, energy_power_j = 0, unmeasured_s = 0;
  int counter_resets = 0, gaps = 0;
  int gpus_without_counter = 0;  // GPUs with power-only intervals
};

NodeTotals node_totals(const AccountReport& r);

}  // namespace gd::accounting
