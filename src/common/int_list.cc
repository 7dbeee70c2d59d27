#include "common/int_list.h"

namespace gd {

std::string join_ints(const std::vector<int>& values,
                      std::string_view separator) {
  std::string out;
  for (int v : values) {
    if (!out.empty()) out += separator;
    out += std::to_string(v);
  }
  return out;
}

}  // namespace gd
