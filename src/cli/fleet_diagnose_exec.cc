// diagnose --prometheus in the lean gpudoctor: gpudoctor-full runs it (see
// fleet_diagnose.h).
#include "cli/fleet_diagnose.h"
#include "cli/full_binary.h"

namespace gd {

int diagnose_fleet(const FleetDiagnoseFlags&, const DiagnoseOptions&) {
  exec_full_binary("diagnose --prometheus");
}

}  // namespace gd
