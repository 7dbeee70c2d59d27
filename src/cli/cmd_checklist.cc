// gpudoctor diagnose --checklist (placeholder until the checklist lands).
#include <stdexcept>

#include "cli/global_options.h"

namespace gd {
int run_checklist(const GlobalOptions&, bool) {
  throw std::runtime_error("--checklist is not available yet");
}
}  // namespace gd
