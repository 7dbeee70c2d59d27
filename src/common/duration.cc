#include "common/duration.h"

namespace gd {

double parse_duration_seconds(std::string_view) { return 0; }

}  // namespace gd
