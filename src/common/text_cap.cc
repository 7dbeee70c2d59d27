#include "common/text_cap.h"

#include <string>

namespace gd {

void cap_text(std::string& text, size_t max_bytes, size_t already_left_out) {
  if (text.size() <= max_bytes && already_left_out == 0) return;
  size_t cut = text.size() < max_bytes ? text.size() : max_bytes;
  // Back off over at most three UTF-8 continuation bytes to the start of the
  // character they belong to.
  for (int i = 0; i < 3 && cut > 0 && cut < text.size() &&
                  (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80;
       ++i)
    --cut;
  size_t left_out = text.size() - cut + already_left_out;
  text.resize(cut);
  text += "…[truncated " + std::to_string(left_out) + " bytes]";
}

}  // namespace gd
