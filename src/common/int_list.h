// Lists of GPU indices (or pids) in text: "0,1,3" in table cells and
// labels, "0, 1, 3" in sentences.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gd {

std::string join_ints(const std::vector<int>& values,
                      std::string_view separator = ", ");

}  // namespace gd
