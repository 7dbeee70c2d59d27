#include "views/format.h"

#include "common/terminal_text.h"

namespace gd {

std::string ellipsize(std::string_view text, size_t width) {
  return terminal_fit(text, width);
}

}  // namespace gd
