#include "common/terminal_text.h"

namespace gd {

// Placeholder until the sanitiser lands: passes text through.
std::string terminal_safe(std::string_view text, size_t max_bytes) {
  return std::string(text.substr(0, max_bytes));
}

}  // namespace gd
