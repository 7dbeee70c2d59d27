// `gpudoctor diagnose --checklist`: the items of checklist/checklist.h as
// text and JSON.
#pragma once

#include <string>
#include <vector>

#include "checklist/checklist.h"

namespace gd {

// Aligned columns: status, id, value, then detail on its own indented line.
std::string format_checklist_text(const std::vector<CheckItem>& items);
// {"checks": [{"id", "status", "value", "detail"}, ...]}
std::string format_checklist_json(const std::vector<CheckItem>& items);

}  // namespace gd
