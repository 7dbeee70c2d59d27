// `gpudoctor watch-leak`: the estimates of procmgmt/leak_rate.h as text and
// JSON.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "procmgmt/leak_rate.h"

namespace gd {

std::string render_leaks(const std::vector<procmgmt::LeakEstimate>& e,
                         size_t samples);
std::string leaks_to_json(const std::vector<procmgmt::LeakEstimate>& e,
                          size_t samples);

}  // namespace gd
