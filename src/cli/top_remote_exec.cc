// top --connect in the lean gpudoctor: gpudoctor-full runs it (see
// top_remote.h).
#include "cli/full_binary.h"
#include "cli/top_remote.h"

namespace gd {

int run_top_remote(const GlobalOptions&, const TopFlags&, top::TopOptions&) {
  exec_full_binary("top --connect");
}

int run_top_fleet(const GlobalOptions&, const TopFlags&, bool) {
  exec_full_binary("top --prometheus");
}

}  // namespace gd
